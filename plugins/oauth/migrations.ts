import type { Migration } from "../../src/index.ts";
import { DASHBOARD_USERS, type DashboardUserRecord } from "./records.ts";

/** Dashboard users made before roles existed become owners: until then every user could do everything. */
export const dashboardUsersHaveRoles: Migration = {
  id: "dashboard-users-have-roles",
  async up({ storage }) {
    await storage.collection<DashboardUserRecord>(DASHBOARD_USERS).updateWhere({ role: { exists: false } }, { role: "owner" });
  },
};
