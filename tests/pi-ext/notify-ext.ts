/**
 * Pi's own notify example (examples/extensions/notify.ts), reduced to its OSC 777 path: an
 * extension's own notification, written on its own when the run settles. The sequence guard
 * must let it through (tests/test_sequence_guard_pi.py).
 */

import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.on("agent_settled", async () => {
		process.stdout.write("\x1b]777;notify;Pi;Ready for input\x07");
	});
}
