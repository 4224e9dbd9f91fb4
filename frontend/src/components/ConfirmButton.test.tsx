import { act, fireEvent, render, screen, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";

import { ConfirmButton } from "./ConfirmButton";

function deferred() {
  let resolve: () => void = () => undefined;
  let reject: (reason: Error) => void = () => undefined;
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

describe("ConfirmButton", () => {
  it("asks first, and closes as soon as a plain confirmation is given", () => {
    const onConfirm = vi.fn();
    render(<ConfirmButton label="Revoke" question="Revoke it?" onConfirm={onConfirm} />);
    fireEvent.click(screen.getByRole("button", { name: "Revoke" }));
    const group = screen.getByRole("group", { name: "Confirm: Revoke" });
    fireEvent.click(within(group).getByRole("button", { name: "Revoke" }));
    expect(onConfirm).toHaveBeenCalledOnce();
    expect(screen.queryByRole("group")).toBeNull();
  });

  it("stays open while a confirmation runs, and after it is refused", async () => {
    const onAsk = vi.fn();
    let running = deferred();
    render(
      <ConfirmButton
        label="Revert this change"
        question="Restore it?"
        confirmLabel="Confirm revert"
        busyLabel="Reverting…"
        groupLabel="Confirm the revert"
        onAsk={onAsk}
        onConfirm={() => running.promise}
      />,
    );
    fireEvent.click(screen.getByRole("button", { name: "Revert this change" }));
    expect(onAsk).toHaveBeenCalledOnce();
    const group = screen.getByRole("group", { name: "Confirm the revert" });
    fireEvent.click(within(group).getByRole("button", { name: "Confirm revert" }));
    expect(within(group).getByRole<HTMLButtonElement>("button", { name: "Reverting…" }).disabled).toBe(true);

    await act(async () => {
      running.reject(new Error("refused"));
      await running.promise.catch(() => undefined);
    });
    expect(within(group).getByRole<HTMLButtonElement>("button", { name: "Confirm revert" }).disabled).toBe(false);

    running = deferred();
    fireEvent.click(within(group).getByRole("button", { name: "Confirm revert" }));
    await act(async () => {
      running.resolve();
      await running.promise;
    });
    expect(screen.queryByRole("group")).toBeNull();
    expect(screen.getByRole("button", { name: "Revert this change" })).toBeDefined();
  });
});
