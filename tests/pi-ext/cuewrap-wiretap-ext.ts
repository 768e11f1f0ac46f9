/**
 * cuewrap wiretap — a TEST extension: records every line the cuewrap bridge extension writes
 * to its socket, so a test can check what really went over the wire (e.g. that no question or
 * answer text is sent unless privacy.body = "summary").
 *
 * Loaded with `-e` next to the bridge; active only when CUEWRAP_TEST_WIRETAP names a file.
 * It wraps net.Socket.prototype.write (shared by every extension in Pi's process) and keeps
 * only Unix-socket connections whose first write is the bridge's `{"type":"auth"` line; each
 * write is appended to the file as it was written (the auth line's token is replaced).
 */

import * as fs from "node:fs";
import * as net from "node:net";

const file = process.env.CUEWRAP_TEST_WIRETAP;
const TAG = Symbol.for("cuewrap.test.wiretap");
const PATCHED = Symbol.for("cuewrap.test.wiretap.patched");

type Tagged = net.Socket & { [TAG]?: boolean; _handle?: { constructor?: { name?: string } } };

function install(path: string): void {
	const proto = net.Socket.prototype as unknown as Record<symbol, unknown> & { write: (...a: unknown[]) => boolean };
	if (proto[PATCHED]) return; // /reload re-imports this module
	proto[PATCHED] = true;
	const original = proto.write;
	proto.write = function (this: Tagged, ...args: unknown[]): boolean {
		try {
			const chunk = args[0];
			const text = typeof chunk === "string" ? chunk : Buffer.isBuffer(chunk) ? chunk.toString("utf8") : undefined;
			if (text !== undefined) {
				if (this[TAG] === undefined) {
					const pipe = this._handle?.constructor?.name === "Pipe";
					this[TAG] = pipe && text.startsWith('{"type":"auth"');
				}
				if (this[TAG]) {
					const line = text.startsWith('{"type":"auth"') ? '{"type":"auth","token":"<token>"}\n' : text;
					fs.appendFileSync(path, line);
				}
			}
		} catch {
			// a test helper must not disturb Pi either
		}
		return original.apply(this, args);
	};
}

export default function (): void {
	if (file) install(file);
}
