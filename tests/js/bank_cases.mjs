// Runs explorer cases through tcgemm/widgets/banks.js, the explorer's JavaScript bank model (with
// bank_puzzles.js, its puzzles' judge, appended as the widget appends it), and prints one JSON result
// per case. Loaded from its text, as anywidget loads it, so no package.json or bundler is involved.
// stdin: {"cases": [settings...], "exprs": [{expr, names}...], "puzzles": [{name, settings}...],
// "catalog": the widget's catalog}, where the names' values are decimal strings (integers of any size);
// stdout: {"cases": [...], "exprs": [...], "puzzles": [{solved, problems}...]}, each valid case with the
// words the explorer shows for it.
import { readFileSync } from "node:fs";

const source = ["banks.js", "bank_puzzles.js"]
  .map((name) => readFileSync(new URL(`../../tcgemm/widgets/${name}`, import.meta.url), "utf8")).join("\n");
const banks = await import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);

function attempt(compute) {
  try {
    return compute();
  } catch (error) {
    if (!(error instanceof Error) || error.constructor !== Error) throw error; // a bug, not a refusal
    return { error: error.message };
  }
}

function runCase(settings, catalog) {
  return attempt(() => {
    const { access, report } = banks.analyze(settings);
    return {
      addresses: access.addresses,
      wavefronts: report.wavefronts,
      ideal: report.ideal,
      conflicts: report.conflicts,
      ways: report.ways,
      phases: report.phases.map((p) => ({ lanes: p.lanes, banks: p.banksPerLane, wavefronts: p.wavefronts })),
      tile_rows: banks.tileRows(settings),
      cute: banks.cuteEquivalent(settings),
      words: {
        summary: banks.summaryText(catalog, settings, report),
        phases: report.phases.map((_, p) => banks.phaseText(access, report, p)),
        rows: report.phases.map((p, i) => banks.phaseRowLabel(i, p.wavefronts)),
      },
    };
  });
}

function runExpr({ expr, names }) {
  return attempt(() => {
    const values = Object.fromEntries(Object.entries(names).map(([k, v]) => [k, BigInt(v)]));
    return { value: String(banks.evaluate(banks.parseExpr(expr), values)) };
  });
}

const input = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify({
  cases: (input.cases || []).map((settings) => runCase(settings, input.catalog)),
  exprs: (input.exprs || []).map(runExpr),
  puzzles: (input.puzzles || []).map(({ name, settings }) => banks.puzzleSolved(input.catalog.puzzles[name], settings)),
}));
