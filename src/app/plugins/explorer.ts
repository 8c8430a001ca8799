import { devFaucet } from "../../chain/routes/dev-faucet.js";
import type { Config } from "../../config.js";
import { registerExplorer } from "../../http/explorer.js";
import type { SimulatorControls } from "../../http/sim-relay.js";
import type { ChainConnection } from "../connect-chain.js";
import { appPlugin } from "./app-plugin.js";

/**
 * The sandbox's faucet (development with the embedded chain) and the explorer, which uses it. The
 * explorer reads the prediction-market API, so it is offered only on that API's listener.
 */
export const explorer = appPlugin(
  "explorer",
  async (
    app,
    options: {
      mode: Config["MODE"];
      chain?: ChainConnection;
      explorer?: {
        enabled: boolean;
        tokenSymbols?: Readonly<Record<string, string>>;
        simulator?: SimulatorControls;
      };
    },
  ) => {
    const { mode, chain } = options;
    const sandbox = chain?.sandbox;
    if (chain && sandbox) devFaucet(app, { chain: chain.chain, signers: sandbox.signers }, mode);
    if (!options.explorer) return;
    const { enabled, tokenSymbols, simulator } = options.explorer;
    registerExplorer(app, {
      enabled,
      mode,
      sandbox: mode === "development" && sandbox !== undefined,
      ...(chain ? { rpcUrl: chain.rpcUrl } : {}),
      ...(tokenSymbols ? { tokenSymbols } : {}),
      ...(simulator ? { simulator } : {}),
    });
  },
);
