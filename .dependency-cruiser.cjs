/**
 * The floor plan of src/ (see design.md, Layout), checked by test/architecture.test.ts: no cycles, a
 * lower layer never imports a higher one, the client speaks only the contract, and domain code throws
 * its own errors (routes map them to the catalogue).
 */
const LAYERS = [
  ["contract"],
  ["limits", "every"],
  ["config"],
  ["storage"],
  ["api-keys"],
  ["http"],
  ["chain"],
  ["upstream"],
  ["demo"],
  ["archive"],
  ["markets"],
  ["simulator", "trading"],
  ["mcp"],
  ["app"],
  ["cli"],
];
const DOMAIN = "^src/(storage|api-keys|chain|upstream|demo|archive|markets|simulator|trading)/";
const folder = (name) => `^src/${name}(/|\\.ts$)`;

const layerRules = LAYERS.flatMap((layer, rank) =>
  layer.map((name) => ({
    name: `layer-${name}`,
    comment: `${name} may import only what lies below it in the floor plan`,
    severity: "error",
    from: { path: folder(name) },
    to: {
      path: `^src/(${LAYERS.slice(rank + 1)
        .flat()
        .concat(layer.filter((other) => other !== name))
        .join("|")})(/|\\.ts$)`,
    },
  })),
).filter((rule) => !rule.to.path.startsWith("^src/()"));

module.exports = {
  /** The layers, lowest first; docs/architecture.md lists the same (test/architecture.test.ts). */
  layers: LAYERS,
  forbidden: [
    {
      name: "no-circular",
      comment: "an import cycle: split the shared part into its own module",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "client-speaks-the-contract",
      comment: "src/client is what users import: it may use the contract and nothing of the server",
      severity: "error",
      from: { path: "^src/client/" },
      to: { path: "^src/", pathNot: "^src/(client|contract)/" },
    },
    {
      name: "nothing-imports-the-client",
      severity: "error",
      // The CLI, and the MCP tools, which call the venue as its clients do.
      from: { path: "^src/", pathNot: "^src/(client|cli|mcp)/" },
      to: { path: "^src/client/" },
    },
    {
      name: "domain-errors-stay-in-the-domain",
      comment: "domain modules throw their own errors; only routes/ turn them into catalogue errors",
      severity: "error",
      from: { path: DOMAIN, pathNot: "/routes/" },
      to: { path: "^src/(contract|http)/errors\\.ts$" },
    },
    {
      name: "trading-uses-the-chain-interface",
      comment: "trading talks to any chain through src/chain's interface, never to the sandbox's internals",
      severity: "error",
      from: { path: "^src/trading/" },
      to: { path: "^src/chain/sandbox/" },
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
