import { describe, expect, it } from "vitest";

import { curlExample, enrollCommand, shellQuote } from "./commands";

describe("shellQuote", () => {
  it("leaves safe words bare and quotes the rest", () => {
    expect(shellQuote("https://fathom.example.org")).toBe("https://fathom.example.org");
    expect(shellQuote("fet_abc-DEF_123")).toBe("fet_abc-DEF_123");
    expect(shellQuote("two words")).toBe("'two words'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(shellQuote("")).toBe("''");
  });
});

describe("enrollCommand", () => {
  it("gives the whole enrol line", () => {
    expect(
      enrollCommand({ server: "https://fathom.example.org", token: "fet_x", name: "athens", address: "198.18.1.2" }),
    ).toBe(
      "fathom-agent enroll --server https://fathom.example.org --token fet_x --name athens --address 198.18.1.2",
    );
  });

  it("registers a dual-stack host's addresses, one --address each, the primary first", () => {
    expect(
      enrollCommand({ server: "https://f.example", token: "fet_x", name: "lisbon", address: " 198.18.0.1, 2001:2::1 " }),
    ).toBe("fathom-agent enroll --server https://f.example --token fet_x --name lisbon --address 198.18.0.1 --address 2001:2::1");
  });

  it("keeps placeholders for what is not known yet", () => {
    expect(enrollCommand({ server: "http://localhost:8000", token: "fet_x", name: " ", address: "" })).toBe(
      "fathom-agent enroll --server http://localhost:8000 --token fet_x --name <name> --address <address>",
    );
  });

  it("forces a re-key over the old credential", () => {
    expect(
      enrollCommand({ server: "https://f.example", token: "fet_y", name: "athens", address: "2001:db8::1", rekey: true }),
    ).toBe("fathom-agent enroll --server https://f.example --token fet_y --name athens --address 2001:db8::1 --force");
  });
});

describe("curlExample", () => {
  it("calls the paths list with the bearer token", () => {
    expect(curlExample("https://fathom.example.org/", "fpt_abc")).toBe(
      'curl -H "Authorization: Bearer fpt_abc" https://fathom.example.org/api/v1/paths/',
    );
  });
});
