import { defineToken } from "../../src/index.ts";
import type { AccountsService } from "./accounts-service.ts";

export const ACCOUNTS_SERVICE = defineToken<AccountsService>("AccountsService", ["reachkit/plugins/accounts (accountsPlugin)"]);
