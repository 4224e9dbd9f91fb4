// plotly.js-dist-min is the prebuilt bundle of plotly.js and ships without types.
declare module "plotly.js-dist-min" {
  export * from "plotly.js";
}
