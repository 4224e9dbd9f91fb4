import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { Sparkline } from "./Sparkline";

describe("Sparkline", () => {
  it("draws each series as a labelled SVG path", () => {
    const { container } = render(
      <Sparkline
        label="rate against ceiling"
        zeroBased
        series={[
          { values: [1, 2, 3], className: "spark-rate" },
          { values: [4, 4, 4], className: "spark-ceiling" },
        ]}
      />,
    );
    const svg = screen.getByRole("img", { name: "rate against ceiling" });
    expect(svg.getAttribute("viewBox")).toBe("0 0 96 22");
    const paths = container.querySelectorAll("path");
    expect([...paths].map((path) => path.getAttribute("class"))).toEqual(["spark-rate", "spark-ceiling"]);
    expect(paths[0]?.getAttribute("d")).toMatch(/^M/);
  });

  it("shows a dash, still labelled, when there is no value", () => {
    const { container } = render(<Sparkline label="no RTT" series={[{ values: [null, null], className: "x" }]} />);
    expect(container.querySelector("svg")).toBeNull();
    expect(screen.getByTitle("no RTT").textContent).toBe("–");
  });
});
