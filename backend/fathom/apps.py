from django.apps import AppConfig


class FathomConfig(AppConfig):
    """Project-wide start-up; owns no models."""

    name = "fathom"

    def ready(self) -> None:
        # Lets the generic annotations the type checker wants (ModelAdmin[Agent],
        # Serializer[Any]) work at run time. It must not run inside settings.py: importing
        # DRF there makes it read REST_FRAMEWORK before it exists and cache the defaults.
        import django_stubs_ext
        from rest_framework import fields, generics, mixins, serializers, viewsets

        django_stubs_ext.monkeypatch(
            extra_classes=[
                fields.Field,
                generics.GenericAPIView,
                mixins.CreateModelMixin,
                mixins.DestroyModelMixin,
                mixins.ListModelMixin,
                mixins.RetrieveModelMixin,
                serializers.BaseSerializer,
                viewsets.GenericViewSet,
                viewsets.ReadOnlyModelViewSet,
            ]
        )
