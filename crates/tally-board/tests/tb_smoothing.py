"""TensorBoard's own smoothing, run from the installed `tensorboard` package: its line chart's
`resmoothDataset` method is cut out of the page bundle the package ships (webfiles.zip) and run
by node over the values read from stdin (JSON: {"weight": w, "values": [...]}, NaN as null).
Prints the smoothed values as JSON (non-finite as null). Used by crates/tally-board/tests/data.rs."""
import json, os, re, subprocess, sys, zipfile

import tensorboard

bundle = os.path.join(os.path.dirname(tensorboard.__file__), "webfiles.zip")
with zipfile.ZipFile(bundle) as z:
    js = z.read("index.js").decode("utf-8", "replace")
start = js.index("resmoothDataset(t){")
depth, i = 0, js.index("{", start)
for i in range(i, len(js)):
    depth += {"{": 1, "}": -1}.get(js[i], 0)
    if depth == 0:
        break
method = js[start : i + 1]
args = json.load(sys.stdin)
program = """
const args = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const chart = { smoothingWeight: args.weight, yValueAccessor: (d) => d.y, %s };
const data = args.values.map((y) => ({ y: y === null ? NaN : y }));
chart.resmoothDataset({ data: () => data });
console.log(JSON.stringify(data.map((d) => (Number.isFinite(d.smoothed) ? d.smoothed : null))));
""" % method
out = subprocess.run(["node", "-e", program], input=json.dumps(args), capture_output=True, text=True, check=True)
sys.stdout.write(out.stdout)
