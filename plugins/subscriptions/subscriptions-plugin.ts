import { definePlugin } from "../../src/kernel/plugin.ts";
import { defineToken } from "../../src/kernel/token.ts";
import { subscriptionsCommands } from "./commands.ts";
import { signUpUnitsCollection, SignUpUnits } from "./sign-up-units.ts";

/** The in-process service of the subscriptions plugin. */
export interface SubscriptionsApi {
  signUpUnits: SignUpUnits;
}

declare module "../../src/kernel/plugin.ts" {
  interface PluginApis {
    subscriptions: SubscriptionsApi;
  }
}

export const SIGN_UP_UNITS_SERVICE = defineToken<SignUpUnits>("SignUpUnits", ["reachkit/plugins/subscriptions (subscriptionsPlugin)"]);

/** Subscribers, subscriptions and API sign-up units. */
export function subscriptionsPlugin() {
  return definePlugin({
    name: "subscriptions",
    collections: [signUpUnitsCollection],
    commands: subscriptionsCommands,
    register({ container, storage, clock }) {
      container.bind(SIGN_UP_UNITS_SERVICE, { useFactory: () => new SignUpUnits(storage, clock) });
    },
    api: ({ resolve }): SubscriptionsApi => ({ signUpUnits: resolve(SIGN_UP_UNITS_SERVICE) }),
    async provisionCompany({ resolve }, company) {
      const units = resolve(SIGN_UP_UNITS_SERVICE);
      const created = [
        await units.create({ companyId: company.id, type: "MARKETING", language: "en", country: "US" }),
        await units.create({ companyId: company.id, type: "TRANSACTIONAL", language: "en", country: "US" }),
      ];
      return {
        signUpSources: created.map((unit) => ({ id: unit.id, type: unit.type, language: unit.language, country: unit.country })),
      };
    },
  });
}
