"""The iperf3 public key an agent reports: one PEM RSA SubjectPublicKeyInfo, checked before
it reaches any peer's plan (a peer's iperf3 reads it with OpenSSL)."""

from __future__ import annotations

import base64
import binascii
import re

from rest_framework import serializers

PEM_PUBLIC_KEY = re.compile(r"-----BEGIN PUBLIC KEY-----\n([A-Za-z0-9+/=\n]+)-----END PUBLIC KEY-----\n?")
# The DER of AlgorithmIdentifier rsaEncryption (1.2.840.113549.1.1.1): iperf3 accepts RSA keys only.
RSA_ENCRYPTION_OID = bytes.fromhex("06092a864886f70d010101")
MIN_DER_BYTES = 160  # an RSA-1024 key; iperf3 cannot fit its credential in less


def validate_rsa_public_key_pem(value: str | None) -> None:
    if value is None:
        return
    match = PEM_PUBLIC_KEY.fullmatch(value)
    if match is None:
        raise serializers.ValidationError("must be one PEM block 'BEGIN PUBLIC KEY' (SubjectPublicKeyInfo)")
    try:
        der = base64.b64decode(match.group(1).replace("\n", ""), validate=True)
    except (binascii.Error, ValueError) as error:
        raise serializers.ValidationError(f"the PEM body is not base64: {error}") from None
    if len(der) < MIN_DER_BYTES or der[0] != 0x30 or RSA_ENCRYPTION_OID not in der[:32]:
        raise serializers.ValidationError("must be an RSA public key of at least 1024 bits")
