// Hostile programs in record mode (the tracer runs them for real): bounded fork bombs, endless
// loops, floods of output, children in sessions of their own, daemons, sys.settrace, writes into
// the tracer's channel (fd 3 and the records' stream), a huge local. The run must end within its
// limits, the session must answer, and nothing the program started may outlive it.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Gen } from "../gen.js";
import type { Tally } from "../harness.js";
import { adapter, end, launch, stopAfter } from "../dap.js";

/** Program text from a few parameters the generator picks. */
const PROGRAMS: ((g: Gen) => string)[] = [
  (g) => `import os, time\nfor _ in range(${g.int(2, 6)}):\n    os.fork()\ntime.sleep(60)\n`,
  () => "while True:\n    pass\n",
  (g) => `x = 0\nwhile True:\n    x += ${g.int(1, 9)}\n`,
  (g) => `import sys\nfor i in range(${g.pick([10 ** 5, 10 ** 6])}):\n    print('x' * ${g.pick([10, 1000, 100_000])})\n`,
  (g) => `import sys\nsys.stdout.write('y' * ${g.pick([10 ** 6, 10 ** 7, 5 * 10 ** 7])})\n`,
  (g) => `import sys\nfor i in range(${g.int(1, 2000)}):\n    sys.stderr.write('e' * ${g.int(1, 10_000)})\n`,
  () => "import subprocess\np = subprocess.Popen(['sleep', '60'], start_new_session=True)\nx = p.pid\n",
  () => "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(60)\n    os._exit(0)\ny = 1\n",
  () => "import signal, subprocess\np = subprocess.Popen(['python3', '-c', 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)'])\nz = 2\n",
  () => "import sys\nsys.settrace(None)\nx = 1\ny = 2\n",
  () => "import sys\nsys.settrace(lambda *a: None)\nx = 1\n",
  (g) => `import os\nos.write(3, ${g.pick(["b'null\\n'", "b'[1,2]\\n'", "b'{\"event\": \"exit\", \"status\": \"normal\"}\\n'", "b'{\"event\":\"line\",\"line\":\"NaN\",\"depth\":0,\"func\":\"<module>\",\"locals\":{}}\\n'", "b'\\xff' * 100000", "b'{' * 100000 + b'\\n'"])})\nx = 1\n`,
  (g) => `import os\nfor fd in range(3, ${g.int(4, 20)}):\n    try:\n        os.write(fd, b'{\"event\": \"line\", \"line\": 1, \"depth\": 0, \"func\": \"/etc/passwd\", \"locals\": {}}\\n')\n    except OSError:\n        pass\nx = 1\n`,
  () => "import os\nos.close(1)\nos.close(2)\nx = 1\n",
  (g) => `big = bytearray(${g.pick([2 ** 20, 2 ** 26, 2 ** 28])})\nx = 1\n`,
  () => "def f(n):\n    return f(n + 1)\nf(0)\n",
  () => "import threading, time\nfor _ in range(8):\n    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\nx = 1\n",
  () => "x = input()\n",
  () => "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
];

export async function programs(g: Gen, label: string, tally: Tally, work: string): Promise<void> {
  const program = join(work, "hostile.py");
  writeFileSync(program, g.pick(PROGRAMS)(g));
  const t = await adapter(label, tally);
  const from = t.raw.messages.length;
  const r = await launch(t, { program, mode: "record", trusted: true, stopOnEntry: g.chance(0.5), timeout: g.pick([1, 2, 3]), maxOutput: g.pick([1000, 1_000_000]) }, 30_000);
  if (r?.success) {
    // Run to the end, stepping now and then: every wait is bounded by the run's limits.
    let stop = await stopAfter(t, from, 30_000, "the launch");
    while (stop?.event === "stopped") {
      const before = t.raw.messages.length;
      await t.request(g.pick(["continue", "next", "stepIn"]), { threadId: 1 }, 30_000);
      stop = await stopAfter(t, before, 30_000, "a move");
    }
  } else if (r && !r.message) t.problem("the record launch failed without a message");
  // A refusal with a message is an answer: a program that forges records ends its run with one.
  await end(t);
}
