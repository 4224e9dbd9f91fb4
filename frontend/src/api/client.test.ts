import { describe, expect, it } from "vitest";

import { ApiError, errorMessage, readCookie } from "./client";

describe("errorMessage", () => {
  it("prefers the server's detail", () => {
    expect(errorMessage(400, { detail: "invalid username or password" })).toBe("invalid username or password");
  });

  it("joins field errors", () => {
    expect(errorMessage(400, { username: ["This field is required."], start: "must be before end" })).toBe(
      "username: This field is required.; start: must be before end",
    );
  });

  it("falls back to the status for bodies it cannot read", () => {
    expect(errorMessage(502, null)).toBe("the server answered HTTP 502");
    expect(errorMessage(500, "x".repeat(400))).toBe("the server answered HTTP 500");
    expect(errorMessage(404, {})).toBe("the server answered HTTP 404");
  });

  it("shows a short plain-text body", () => {
    expect(errorMessage(503, "maintenance\n")).toBe("maintenance");
  });
});

describe("readCookie", () => {
  it("finds a cookie among others", () => {
    expect(readCookie("sessionid=abc; csrftoken=t%2Bk=n", "csrftoken")).toBe("t+k=n");
    expect(readCookie("xcsrftoken=1", "csrftoken")).toBeNull();
    expect(readCookie("", "csrftoken")).toBeNull();
  });
});

describe("ApiError", () => {
  it("treats 401 and 403 as a lost session", () => {
    expect(new ApiError(403, "no").isUnauthenticated).toBe(true);
    expect(new ApiError(401, "no").isUnauthenticated).toBe(true);
    expect(new ApiError(400, "no").isUnauthenticated).toBe(false);
  });
});

describe("ApiError.fieldErrors", () => {
  it("reads a 400 body field by field", () => {
    const error = new ApiError(400, "x", { name: ["too long", "taken"], expires_at: "in the past", detail: "d" });
    expect(error.fieldErrors).toEqual({ name: "too long taken", expires_at: "in the past" });
  });

  it("is empty for other statuses and odd bodies", () => {
    expect(new ApiError(403, "x", { name: ["no"] }).fieldErrors).toEqual({});
    expect(new ApiError(400, "x", "plain text").fieldErrors).toEqual({});
    expect(new ApiError(400, "x", [1, 2]).fieldErrors).toEqual({});
  });
});
