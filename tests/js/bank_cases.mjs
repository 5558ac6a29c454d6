// Runs explorer settings (a JSON list on stdin) through tcgemm/widgets/banks.js, the explorer's
// JavaScript bank model, and prints one JSON result per case. Loaded from its text, as anywidget
// loads it, so no package.json or bundler is involved.
import { readFileSync } from "node:fs";

const source = readFileSync(new URL("../../tcgemm/widgets/banks.js", import.meta.url), "utf8");
const banks = await import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);

const cases = JSON.parse(readFileSync(0, "utf8"));
const results = cases.map((settings) => {
  try {
    const { access, report } = banks.analyze(settings);
    return {
      addresses: access.addresses,
      wavefronts: report.wavefronts,
      ideal: report.ideal,
      conflicts: report.conflicts,
      ways: report.ways,
      phases: report.phases.map((p) => ({ lanes: p.lanes, banks: p.banksPerLane, wavefronts: p.wavefronts })),
    };
  } catch (error) {
    return { error: error.message };
  }
});
process.stdout.write(JSON.stringify(results));
