import { consoleSms } from "../../adapters/sms/console/index.ts";
import { memorySms } from "../../adapters/sms/memory/index.ts";
import { smsSenderConformance } from "../../src/testkit/index.ts";

smsSenderConformance("memory", () => {
  const sender = memorySms();
  return { sender, deliveredCount: () => sender.sent.length };
});

smsSenderConformance("console", () => {
  const lines: string[] = [];
  return { sender: consoleSms({ write: (line) => void lines.push(line) }), deliveredCount: () => lines.length };
});
