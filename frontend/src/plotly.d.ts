// plotly.js-basic-dist-min is plotly.js prebuilt with only the traces Fathom draws (scatter and
// bar; pie comes with it) and ships without types.
declare module "plotly.js-basic-dist-min" {
  export * from "plotly.js";
}
