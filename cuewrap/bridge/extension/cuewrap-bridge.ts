/**
 * cuewrap bridge: forwards Pi's lifecycle facts to cuewrap over a private Unix socket.
 *
 * Injected by cuewrap as `pi -e <this file>`. Protocol version 1, documented in
 * docs/bridge-protocol.md of the cuewrap package. In short:
 *
 * - The socket path and token come from CUEWRAP_BRIDGE_SOCKET / CUEWRAP_BRIDGE_TOKEN. They are
 *   removed from process.env when this module loads (tool subprocesses must not inherit them) and
 *   kept on globalThis[Symbol.for("cuewrap.bridge")] for /reload, which re-imports this module.
 * - One connection per extension runtime (startup, /reload, /new...), opened lazily on the first
 *   event, unref'd, ended on session_shutdown. Lines: {"type":"auth","token":…}, then "hello",
 *   then one line per event. Newline-delimited JSON, validated fields only: never a prompt,
 *   question, answer, tool argument or output, or assistant text.
 * - Except when the user asked for it (privacy.body = "summary": CUEWRAP_BRIDGE_SUMMARY=1, taken
 *   from process.env like the socket variables): then `ui_prompt_start` carries the dialog's
 *   title, `tool_execution_start` of ask_user_question its first question, and `agent_end` the
 *   first line of the last answer or its error, each as one cleaned line of at most 200
 *   characters in a `summary` field. Never the prompt, and nothing of the kind otherwise.
 * - Handlers never wait for the socket, and every failure is swallowed: if the socket is missing
 *   or fails, this runtime stays silent and Pi is unaffected.
 * - The option a `confirm` or `select` dialog closed with: this module wraps ctx.ui.select and
 *   ctx.ui.confirm (the runner's UI object, once per runtime) to see their result, and
 *   `ui_prompt_end` carries it as `option` — its number as the dialog lists it (confirm: 1 yes,
 *   2 no), 0 for none — never its label. cuewrap checks an answer from elsewhere with it.
 * - `/cue` asks cuewrap for its status page, `/cue on|off` toggles cues, `/cue mute [DURATION]`
 *   and `/cue unmute` mute this session (docs/attention.md); cuewrap may also push
 *   {"type":"notify","text":…} lines, shown with ctx.ui.notify.
 * - Provenance (docs/terminal-guard.md, "Whose sequence is it"): once per process this module
 *   wraps process.stdout.write. Right before Pi's first frame it writes PROVENANCE_MARK; from
 *   then on a write made of nothing but escape sequences that act outside the window (a title,
 *   a status report, progress, a notification, a clipboard write, a query) and no DEC private
 *   mode is sent to cuewrap as {"type":"own","data":…} instead of the terminal, and cuewrap
 *   writes it. Everything else (Pi's frames, with the model's text in them) goes to the
 *   terminal as before. So whatever the model's text holds, it cannot pass for Pi's own.
 *   A Pi without its TUI (print, json, rpc: no frames) gets the mark at its runtime's start.
 * - A lost bridge (docs/bridge-protocol.md): when the runtime's connection fails, or ends at a
 *   session_shutdown other than quit and no new runtime takes over within GONE_GRACE_MS (a
 *   failed /reload), Pi's own writes go to the terminal again, as before the mark (cuewrap
 *   notices the same and reads them by the frame rule); a new runtime's connection takes them
 *   over again.
 */

import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";

const PROTOCOL = 1;
const ENV_SOCKET = "CUEWRAP_BRIDGE_SOCKET";
const ENV_TOKEN = "CUEWRAP_BRIDGE_TOKEN";
const ENV_SUMMARY = "CUEWRAP_BRIDGE_SUMMARY"; // "1": privacy.body = "summary"
// tests only: "throw" (the connection fails at the first agent_start), "bad-own" (a line
// cuewrap refuses, then), "reload" (the first /reload fails to load this extension)
const ENV_FAULT = "CUEWRAP_DEBUG_BRIDGE";
const STASH_KEY = Symbol.for("cuewrap.bridge");
const OWNER_KEY = Symbol.for("pi-subagents.completion-owner-id");

const MAX_LINE = 16 * 1024; // bytes; cuewrap drops longer lines
const MAX_ID = 512;
const MAX_PATH = 4096;
const MAX_NAME = 256;
const MAX_OWN_PART = 2048; // UTF-16 units per "own" line: at most 6 bytes each in JSON, under MAX_LINE
const MAX_PENDING_OUT = 1024 * 1024; // bytes queued in the socket before giving up
const MAX_IN = 256 * 1024; // bytes of an unfinished incoming line before giving up
const MAX_NOTICE = 8000;
const MAX_SUMMARY = 200; // code points of a summary (cuewrap's whole notification body: 200)
const SCAN_SUMMARY = 4096; // UTF-16 units of a text looked at for its first line
const ASK_TOOL = "ask_user_question";
const REQUEST_TIMEOUT_MS = 3000;
const TAKEN_WAIT_MS = 250; // how long ui_prompt_end waits for its dialog's result
const UI_ORIGINAL = Symbol.for("cuewrap.bridge.ui-original"); // the UI's own select/confirm
const UI_WATCHER = Symbol.for("cuewrap.bridge.ui-watcher"); // the channel that wraps them now
const MAX_OPTION = 1000;
// after a session_shutdown other than quit: how long a new runtime has to take over Pi's own
// writes before they go to the terminal again (cuewrap waits 3 s before it says so)
const GONE_GRACE_MS = 4000;

type Json = Record<string, unknown>;

interface Stash {
	socketPath?: string;
	token?: string;
	summary?: boolean;
	piVersion?: string | null;
	provenance?: Provenance;
	fault?: string;
	loads?: number; // factory calls in this process (startup, /reload, /new)
}

/** Pi's own writes on their way to cuewrap (one per process: /reload re-imports this module). */
interface Provenance {
	marked: boolean; // the mark went out: own writes are diverted from now on
	frameOpen: boolean; // a frame began in one write and has not ended yet
	queue: string[]; // own writes waiting for a connection (a runtime's first event)
	queued: number; // their UTF-16 units
	dropped: number; // own writes dropped (queue full)
	// the current runtime's channel: true when sent, false to wait (not connected yet), null
	// when its connection is gone
	sink?: (data: string) => boolean | null;
	direct: boolean; // the bridge is lost: own writes go to the terminal as before the mark
	write?: (data: string) => void; // to the terminal, past the wrapper
}

interface Config {
	socketPath: string;
	token: string;
	summary: boolean; // send summaries (privacy.body = "summary")
}

function stash(): Stash {
	const g = globalThis as unknown as Record<symbol, unknown>;
	let s = g[STASH_KEY] as Stash | undefined;
	if (!s || typeof s !== "object") {
		s = {};
		Object.defineProperty(g, STASH_KEY, { value: s, configurable: true, enumerable: false, writable: true });
	}
	return s;
}

/** Move the path and token from process.env to the stash; return what the stash holds. */
function takeConfig(): Config | undefined {
	try {
		const s = stash();
		const envPath = process.env[ENV_SOCKET];
		const envToken = process.env[ENV_TOKEN];
		const envSummary = process.env[ENV_SUMMARY];
		const envFault = process.env[ENV_FAULT];
		delete process.env[ENV_SOCKET];
		delete process.env[ENV_TOKEN];
		delete process.env[ENV_SUMMARY];
		delete process.env[ENV_FAULT];
		if (envFault) s.fault = envFault;
		if (envPath && envToken) {
			s.socketPath = envPath;
			s.token = envToken;
			s.summary = envSummary === "1";
		}
		if (typeof s.socketPath === "string" && typeof s.token === "string") {
			return { socketPath: s.socketPath, token: s.token, summary: s.summary === true };
		}
	} catch {
		// stay inactive
	}
	return undefined;
}

// At load: nothing spawned after this point sees the variables.
takeConfig();

// -- field validation (mirrors cuewrap/bridge/protocol.py) --------------------------------------

// Control characters (C0, DEL, C1), line/paragraph separators, lone surrogates.
const CTRL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ud800-\udfff]/;
const WORD = /^[A-Za-z0-9_.:-]{1,64}$/;

function text(v: unknown, limit: number): string | undefined {
	return typeof v === "string" && v.length > 0 && v.length <= limit && !CTRL.test(v) ? v : undefined;
}

function word(v: unknown): string | undefined {
	return typeof v === "string" && WORD.test(v) ? v : undefined;
}

function bool(v: unknown): boolean | undefined {
	return typeof v === "boolean" ? v : undefined;
}

function int(v: unknown): number | undefined {
	return typeof v === "number" && Number.isSafeInteger(v) ? v : undefined;
}

function obj(v: unknown): Json {
	return v !== null && typeof v === "object" ? (v as Json) : {};
}

// -- summaries (privacy.body = "summary" only; cuewrap/engine/summary.py cleans them again) ----

// Escape sequences, whole: CSI (7- and 8-bit), OSC/DCS/SOS/PM/APC strings, other ESC + byte.
const ESCAPES =
	/(?:\u001b\[|\u009b)[0-?]*[ -\/]*[@-~]?|(?:\u001b[\]PX^_]|[\u009d\u0090\u0098\u009e\u009f])[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u001b[ -\/]*[0-~]?/g;
// Controls, bidi embeddings/overrides/isolates/marks, other invisible format characters,
// lone surrogates: dropped.
const UNSAFE =
	/[\u0000-\u0008\u000e-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The first non-empty line of a text, cleaned, at most MAX_SUMMARY code points. */
function oneLine(v: unknown): string | undefined {
	if (typeof v !== "string") return undefined;
	const head = v.slice(0, SCAN_SUMMARY).replace(ESCAPES, "");
	for (const raw of head.split(/[\n\r\u000b\u000c\u0085\u2028\u2029]/)) {
		const line = raw.replace(UNSAFE, "").replace(/\s+/g, " ").trim();
		if (line.length > 0) return Array.from(line).slice(0, MAX_SUMMARY).join("").trimEnd();
	}
	return undefined;
}

/** Pi's error message as "status message": `400: {"message":"x",…}` gives "400 x". */
function errorText(v: unknown): string | undefined {
	if (typeof v !== "string") return undefined;
	const m = /^\s*(\d{3})\s*:?\s*([\s\S]*)$/.exec(v.slice(0, SCAN_SUMMARY));
	if (m) {
		let said: unknown;
		try {
			const j = obj(JSON.parse(m[2]));
			said = typeof j.message === "string" ? j.message : obj(j.error).message;
		} catch {
			said = undefined;
		}
		return oneLine(`${m[1]} ${typeof said === "string" ? said : m[2]}`);
	}
	return oneLine(v);
}

/** The last assistant message's answer (first line) or, when it failed, its error. */
function endSummary(messages: unknown): string | undefined {
	if (!Array.isArray(messages)) return undefined;
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = obj(messages[i]);
		if (m.role !== "assistant") continue;
		if (m.stopReason === "aborted") return undefined;
		if (m.stopReason === "error") return errorText(m.errorMessage);
		const content = Array.isArray(m.content) ? m.content : [m.content];
		for (const part of content) {
			const p = obj(part);
			const line = typeof part === "string" ? oneLine(part) : p.type === "text" ? oneLine(p.text) : undefined;
			if (line) return line;
		}
		return undefined;
	}
	return undefined;
}

/** The Ask questionnaire's first question (the tool's arguments). */
function askQuestion(args: unknown): string | undefined {
	const questions = obj(args).questions;
	return Array.isArray(questions) ? oneLine(obj(questions[0]).question) : undefined;
}

/** The installed Pi version, from the package.json above the running CLI (cached per process). */
function piVersion(): string | null {
	const s = stash();
	if (s.piVersion !== undefined) return s.piVersion;
	let version: string | null = null;
	try {
		let dir = path.dirname(fs.realpathSync(process.argv[1] ?? ""));
		for (let i = 0; i < 6 && version === null; i++) {
			const file = path.join(dir, "package.json");
			if (fs.existsSync(file)) {
				const pkg = obj(JSON.parse(fs.readFileSync(file, "utf8")));
				if (typeof pkg.name === "string" && pkg.name.endsWith("pi-coding-agent")) {
					version = text(pkg.version, MAX_NAME) ?? null;
					break;
				}
			}
			const up = path.dirname(dir);
			if (up === dir) break;
			dir = up;
		}
	} catch {
		version = null;
	}
	s.piVersion = version;
	return version;
}

/**
 * Features by the first Pi release that has them (the same table as FEATURES in
 * cuewrap/engine/pi_support.py). Sent in the hello as `capabilities`: what this Pi emits, by its
 * version; null when the version is unknown (cuewrap then assumes everything).
 */
const SINCE: Record<string, string> = {
	agent_settled: "0.80.4",
	ui_prompt: "0.84.4",
	agent_before_settle: "0.87.0",
	osc7501: "1.3.0",
};

function versionParts(v: string | null | undefined): number[] | undefined {
	const m = typeof v === "string" ? /^v?(\d+)\.(\d+)\.(\d+)/.exec(v) : null;
	return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

function atLeast(have: number[], want: number[]): boolean {
	for (let i = 0; i < 3; i++) {
		if (have[i] !== want[i]) return have[i] > want[i];
	}
	return true;
}

function capabilities(version: string | null): string[] | null {
	const have = versionParts(version);
	if (!have) return null;
	return Object.keys(SINCE).filter((name) => {
		const want = versionParts(SINCE[name]);
		return want !== undefined && atLeast(have, want);
	});
}

// -- provenance: Pi's own sequences through the bridge, not the terminal ---------------------

// Must equal MARK in cuewrap/term/provenance.py: a DCS no terminal acts on.
const PROVENANCE_MARK = "\u001bP0;cuewrap-provenance-1\u001b\\";
const FRAME_ON = "\u001b[?2026h";
const FRAME_OFF = "\u001b[?2026l";
const OWN_MAX = 256 * 1024; // bytes of one own write (cuewrap's OWN_MAX)
const OWN_QUEUE_MAX = 512 * 1024; // UTF-16 units of own writes kept while not connected
// One complete sequence: OSC (BEL or ST), DCS (ST), CSI. Mirrors term/provenance.py.
const OWN_TOKEN =
	/\u001b\][^\u0007\u001b\u0018\u001a]*(?:\u0007|\u001b\\)|\u001bP[^\u001b\u0018\u001a]*\u001b\\|\u001b\[[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]/y;
const PRIVATE_MODE = /^\u001b\[\?[0-9;]*[hl]$/;
// CSI queries: the terminal answers into Pi's input (DA, DSR, window reports, DECRQM, XTVERSION,
// kitty keyboard flags)
const CSI_QUERY = /^\u001b\[[\u0030-\u003f]*(?:[cntq]|\$p|u)$/;

/** A write of Pi's own that acts outside the window: complete sequences only, at least one
 * OSC, DCS or query among them, no DEC private mode (those order the screen: they stay). */
function ownWrite(s: string): boolean {
	if (s.length === 0 || s.length > OWN_MAX || s.charCodeAt(0) !== 0x1b) return false;
	let i = 0;
	let outside = false;
	while (i < s.length) {
		OWN_TOKEN.lastIndex = i;
		const m = OWN_TOKEN.exec(s);
		if (!m) return false;
		const t = m[0];
		if (t.charCodeAt(1) === 0x5b) {
			if (PRIVATE_MODE.test(t)) return false;
			if (CSI_QUERY.test(t)) outside = true;
		} else {
			outside = true; // OSC or DCS
		}
		i += t.length;
	}
	return outside && Buffer.byteLength(s, "utf8") <= OWN_MAX;
}

function flushOwn(p: Provenance): void {
	while (p.queue.length > 0 && p.sink && !p.direct) {
		const data = p.queue[0];
		const sent = p.sink(data);
		if (sent === null) return lost(p);
		if (!sent) return;
		p.queue.shift();
		p.queued -= data.length;
	}
}

/** The bridge is lost: what waited for it and every own write from now on go to the terminal
 * (until a new runtime's channel takes over). */
function lost(p: Provenance): void {
	if (p.direct) return;
	p.direct = true;
	const queue = p.queue;
	p.queue = [];
	p.queued = 0;
	for (const data of queue) p.write?.(data);
}

/** An own write to cuewrap: true when it was taken (sent or queued), false when it goes to
 * the terminal (the bridge is lost). */
function divert(p: Provenance, data: string): boolean {
	flushOwn(p);
	if (p.direct) return false;
	if (p.queue.length === 0) {
		const sent = p.sink?.(data);
		if (sent === true) return true;
		if (sent === null) {
			lost(p);
			return false;
		}
	}
	if (p.queued + data.length > OWN_QUEUE_MAX) {
		p.dropped += 1;
		return true;
	}
	p.queue.push(data);
	p.queued += data.length;
	return true;
}

/** A Pi without its TUI draws no frame: the mark goes out at its runtime's start (everything
 * Pi writes from then on is the model's text, or one of its extensions' own writes). */
function markHeadless(ctx: ExtensionContext): void {
	const p = stash().provenance;
	const mode = (ctx as unknown as Json).mode;
	// only on a terminal (cuewrap gives Pi one): JSON or text piped elsewhere stays as Pi wrote it
	if (!p || p.marked || typeof mode !== "string" || mode === "tui" || !process.stdout.isTTY) return;
	p.write?.(PROVENANCE_MARK);
	p.marked = true;
}

type Write = (chunk: unknown, encoding?: unknown, cb?: unknown) => boolean;
type UiCall = (...args: unknown[]) => unknown;

/** Wrap process.stdout.write, once per process (only when cuewrap started Pi). */
function wrapStdout(): void {
	const s = stash();
	if (s.provenance) return;
	const p: Provenance = { marked: false, frameOpen: false, queue: [], queued: 0, dropped: 0, direct: false };
	s.provenance = p;
	const out = process.stdout as unknown as { write: Write };
	const original = out.write;
	p.write = (data) => {
		try {
			original.call(out, data);
		} catch {
			// never disturb Pi
		}
	};
	out.write = function (this: unknown, chunk: unknown, encoding?: unknown, cb?: unknown): boolean {
		try {
			if (typeof chunk === "string" && chunk.length > 0) {
				if (!p.marked) {
					if (chunk.startsWith(FRAME_ON)) {
						original.call(out, PROVENANCE_MARK);
						p.marked = true;
					}
				} else if (!p.frameOpen && !p.direct && ownWrite(chunk) && divert(p, chunk)) {
					const done = typeof encoding === "function" ? encoding : cb;
					if (typeof done === "function") process.nextTick(done as () => void);
					return true;
				}
				if (p.marked) {
					if (chunk.startsWith(FRAME_ON)) p.frameOpen = !chunk.endsWith(FRAME_OFF);
					else if (p.frameOpen && chunk.endsWith(FRAME_OFF)) p.frameOpen = false;
				}
			}
		} catch {
			// never disturb Pi: the write goes out as it came
		}
		return original.call(out, chunk, encoding, cb);
	} as Write;
}

/** A select's result as its option's number (1-based); 0 for none (cancelled); unknown when
 * the label is not one of the options or is there twice. */
function selectedOption(options: unknown, value: unknown): number | undefined {
	if (value === undefined || value === null) return 0;
	if (!Array.isArray(options) || typeof value !== "string") return undefined;
	const at = options.indexOf(value);
	if (at < 0 || at !== options.lastIndexOf(value) || at + 1 > MAX_OPTION) return undefined;
	return at + 1;
}

// -- one connection per extension runtime -----------------------------------------------------

class Channel {
	private sock: net.Socket | undefined;
	private dead = false; // failed or ended: silent for the rest of this runtime
	private failed = false; // the connection failed or was closed by cuewrap (not ended by us)
	// own writes cannot go through this runtime any more: it failed, or it ended at a
	// session_shutdown other than quit and no new runtime took over in time
	gone = false;
	private inbuf = "";
	private nextId = 1;
	private pending = new Map<number, (text: string | undefined) => void>();
	ctx: ExtensionContext | undefined; // the last context seen in this runtime
	parent: string | null = null; // getSessionFile() ?? getSessionId() of that context
	// the outermost confirm/select open now: its kind and the option it closes with
	private taken: { kind: string; option: Promise<number | undefined> } | undefined;

	constructor(private readonly config: Config | undefined) {}

	get active(): boolean {
		return this.config !== undefined && !this.dead;
	}

	/** Summaries may be sent (the user chose privacy.body = "summary"). */
	/** A dialog's title as cuewrap can check it against the screen without being told it:
	 * `<code points>:<HMAC-SHA256 keyed with the channel's token, hex>` of its first line. */
	titleCheck(title: unknown, clean = true): string | undefined {
		const line = clean ? oneLine(title) : typeof title === "string" ? title : undefined;
		if (line === undefined || this.config === undefined) return undefined;
		const mac = crypto.createHmac("sha256", this.config.token).update(line, "utf8").digest("hex");
		return `${Array.from(line).length}:${mac}`;
	}

	/** The same for an Ask call of ONE single-choice question: its question and its options'
	 * labels (each made one line), joined by NUL; none for anything else. */
	askCheck(args: unknown): string | undefined {
		const questions = obj(args).questions;
		if (!Array.isArray(questions) || questions.length !== 1) return undefined;
		const q = obj(questions[0]);
		if (q.multiSelect === true || !Array.isArray(q.options)) return undefined;
		const labels = (q.options as unknown[]).map((o) => oneLine(obj(o).label));
		const parts = [oneLine(q.question), ...labels];
		if (parts.some((p) => p === undefined)) return undefined;
		return this.titleCheck(parts.join("\u0000"), false);
	}

	get summary(): boolean {
		return this.config?.summary === true;
	}

	/** Why /cue got no answer, in one line. */
	get why(): string {
		if (this.config === undefined) {
			return "cuewrap bridge inactive: Pi was not started by cuewrap (run cuewrap pi)";
		}
		if (this.failed) {
			return "cuewrap bridge: the connection to cuewrap failed or was refused (cuewrap --log FILE says why)";
		}
		return "cuewrap did not answer";
	}

	remember(ctx: ExtensionContext | undefined): void {
		if (!ctx) return;
		this.ctx = ctx;
		try {
			const sm = ctx.sessionManager;
			this.parent = sm.getSessionFile() ?? sm.getSessionId() ?? null;
		} catch {
			// keep the previous value
		}
		if (this.active) this.watchDialogs(ctx);
	}

	/** Wrap the runner's UI object's select and confirm (every ctx.ui of this runtime is that
	 * object) to see the option each dialog closes with. The UI's own functions are kept on the
	 * object, so a later runtime (/reload) wraps those, not this runtime's wrappers. The
	 * result is passed on untouched; nothing here can change what the caller gets. */
	private watchDialogs(ctx: ExtensionContext): void {
		try {
			if (ctx.hasUI !== true) return; // no dialogs (and Pi's shared no-op UI is left alone)
			const ui = ctx.ui as unknown as Record<string | symbol, unknown>;
			if (!ui || typeof ui !== "object" || ui[UI_WATCHER] === this) return;
			let original = ui[UI_ORIGINAL] as { select: UiCall; confirm: UiCall } | undefined;
			if (!original) {
				if (typeof ui.select !== "function" || typeof ui.confirm !== "function") return;
				original = { select: ui.select as UiCall, confirm: ui.confirm as UiCall };
				Object.defineProperty(ui, UI_ORIGINAL, { value: original, configurable: true });
			}
			const orig = original;
			ui.select = (title: unknown, options: unknown, opts?: unknown): unknown => {
				const result = orig.select.call(ui, title, options, opts);
				this.watch("select", result, (v) => selectedOption(options, v));
				return result;
			};
			ui.confirm = (title: unknown, message: unknown, opts?: unknown): unknown => {
				const result = orig.confirm.call(ui, title, message, opts);
				this.watch("confirm", result, (v) => (v === true ? 1 : v === false ? 2 : undefined));
				return result;
			};
			Object.defineProperty(ui, UI_WATCHER, { value: this, configurable: true, writable: true });
		} catch {
			// no result in ui_prompt_end: cuewrap then vouches for the keys it typed only
		}
	}

	private watch(kind: string, result: unknown, option: (v: unknown) => number | undefined): void {
		try {
			if (this.taken !== undefined || !(result instanceof Promise)) return; // nested: the outer
			this.taken = {
				kind,
				option: result.then(
					(v) => option(v),
					() => undefined,
				),
			};
		} catch {
			this.taken = undefined;
		}
	}

	/** The result of the dialog that just closed, if it is a confirm/select of ours. */
	takeOption(kind: string | null): Promise<number | undefined> | undefined {
		const taken = this.taken;
		this.taken = undefined;
		return taken !== undefined && taken.kind === kind ? taken.option : undefined;
	}

	/** Queue one message; connects (auth + hello) first when needed. Never throws or waits. */
	send(message: Json): void {
		try {
			if (this.connect()) {
				if (message.type === "agent_start") this.fault();
				this.write(message);
			}
		} catch {
			this.kill();
		}
	}

	/** Tests only (CUEWRAP_DEBUG_BRIDGE): the connection fails, or carries a line cuewrap refuses. */
	private fault(): void {
		const s = stash();
		if (s.fault === "throw") {
			s.fault = undefined;
			throw new Error("cuewrap bridge: injected fault");
		}
		if (s.fault === "bad-own") {
			s.fault = undefined;
			this.write({ type: "own", data: "not an escape sequence", more: false });
		}
	}

	/** One of Pi's own writes for cuewrap to write (provenance); false when it cannot go now,
	 * null when this runtime's connection is gone. */
	own(data: string): boolean | null {
		try {
			if (!this.config) return false;
			if (this.dead) return this.gone ? null : false;
			if (!this.sock && !this.connect()) return false;
			// in parts of at most MAX_OWN_PART units, never splitting a surrogate pair
			let at = 0;
			while (at < data.length) {
				let end = Math.min(data.length, at + MAX_OWN_PART);
				const c = data.charCodeAt(end - 1);
				if (end < data.length && c >= 0xd800 && c <= 0xdbff) end -= 1;
				this.write({ type: "own", data: data.slice(at, end), more: end < data.length });
				at = end;
			}
			return this.dead ? null : true;
		} catch {
			this.kill();
			return null;
		}
	}

	/** Ask cuewrap; resolves with the reply text, or undefined (not connected, timeout). */
	request(action: string): Promise<string | undefined> {
		return new Promise((resolve) => {
			try {
				if (!this.connect()) return resolve(undefined);
				const id = this.nextId++;
				const timer = setTimeout(() => this.settle(id, undefined), REQUEST_TIMEOUT_MS);
				timer.unref?.();
				this.pending.set(id, (t) => {
					clearTimeout(timer);
					resolve(t);
				});
				this.write({ type: "request", id, action });
			} catch {
				resolve(undefined);
			}
		});
	}

	/** End the connection after what was queued (session_shutdown ``reason``). */
	end(reason?: string): void {
		const sock = this.sock;
		this.dead = true;
		this.failPending();
		if (reason !== "quit") {
			// a new runtime takes over within the grace (/reload, /new), or the bridge is lost
			const timer = setTimeout(() => this.lose(), GONE_GRACE_MS);
			timer.unref?.();
		}
		try {
			sock?.end();
		} catch {
			// ignore
		}
	}

	private connect(): boolean {
		if (!this.config || this.dead) return false;
		if (this.sock) return true;
		const hello = this.hello();
		if (!hello) return false; // no context yet: nothing to say who we are
		const sock = net.createConnection({ path: this.config.socketPath });
		this.sock = sock;
		sock.unref();
		sock.setEncoding("utf8");
		sock.on("error", () => this.kill());
		sock.on("close", () => this.kill());
		sock.on("data", (chunk: string) => this.onData(chunk));
		this.write({ type: "auth", token: this.config.token });
		this.write(hello);
		const p = stash().provenance;
		if (p) setImmediate(() => flushOwn(p)); // what waited for this connection
		return true;
	}

	private hello(): Json | undefined {
		const ctx = this.ctx;
		if (!ctx) return undefined;
		const sm = ctx.sessionManager;
		let sessionName: string | undefined;
		try {
			sessionName = text(sm.getSessionName(), MAX_NAME);
		} catch {
			sessionName = undefined;
		}
		const version = piVersion();
		let mode: string | null = null;
		try {
			mode = word((ctx as unknown as Json).mode) ?? null; // absent in older Pi (0.74.2)
		} catch {
			mode = null;
		}
		return {
			type: "hello",
			protocol: PROTOCOL,
			pi: version,
			capabilities: capabilities(version),
			mode,
			hasUI: ctx.hasUI === true,
			sessionId: text(sm.getSessionId(), MAX_ID) ?? null,
			sessionFile: text(sm.getSessionFile(), MAX_PATH) ?? null,
			sessionName: sessionName ?? null,
			pid: process.pid,
		};
	}

	private write(message: Json): void {
		const sock = this.sock;
		if (!sock || this.dead) return;
		if (sock.writableLength > MAX_PENDING_OUT) {
			// cuewrap is not reading: give up rather than grow (cuewrap sees EOF).
			this.kill();
			return;
		}
		const line = JSON.stringify(message);
		if (Buffer.byteLength(line, "utf8") > MAX_LINE) return;
		sock.write(`${line}\n`);
	}

	private onData(chunk: string): void {
		this.inbuf += chunk;
		let nl = this.inbuf.indexOf("\n");
		while (nl >= 0 && !this.dead) {
			const line = this.inbuf.slice(0, nl);
			this.inbuf = this.inbuf.slice(nl + 1);
			this.onLine(line);
			nl = this.inbuf.indexOf("\n");
		}
		if (this.inbuf.length > MAX_IN) this.kill(); // an endless line: give up
	}

	private onLine(line: string): void {
		let m: Json;
		try {
			m = obj(JSON.parse(line));
		} catch {
			return;
		}
		if (m.type === "reply" && typeof m.id === "number" && typeof m.text === "string") {
			this.settle(m.id, m.text);
		} else if (m.type === "notify" && typeof m.text === "string") {
			const ctx = this.ctx;
			try {
				if (ctx?.hasUI) ctx.ui.notify(m.text.slice(0, MAX_NOTICE), "info");
			} catch {
				// a stale context after session replacement: ignore
			}
		}
	}

	private settle(id: number, value: string | undefined): void {
		const done = this.pending.get(id);
		if (done) {
			this.pending.delete(id);
			done(value);
		}
	}

	private failPending(): void {
		for (const id of [...this.pending.keys()]) this.settle(id, undefined);
	}

	private kill(): void {
		if (!this.dead) this.failed = true;
		this.dead = true;
		this.failPending();
		try {
			this.sock?.destroy();
		} catch {
			// ignore
		}
		if (this.failed) this.lose();
	}

	/** Own writes cannot go through this runtime: if it is still the one that takes them, they
	 * go to the terminal again. */
	private lose(): void {
		this.gone = true;
		const p = stash().provenance;
		if (p && p.sink === this.sink) lost(p);
	}

	/** This runtime's sink for Pi's own writes (one function, so that lose() knows it). */
	readonly sink = (data: string): boolean | null => this.own(data);
}

// -- what is forwarded --------------------------------------------------------------------------

function lastStopReason(messages: unknown): string | null {
	if (!Array.isArray(messages)) return null;
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = obj(messages[i]);
		if (m.role === "assistant") return word(m.stopReason) ?? null;
	}
	return null;
}

function ownerNow(): string | null {
	try {
		// Read only: never create the owner id.
		const v = (globalThis as unknown as Record<symbol, unknown>)[OWNER_KEY];
		return text(v, MAX_ID) ?? null;
	} catch {
		return null;
	}
}

/** The pi-subagents fields cuewrap needs (ids, version, booleans) — never task or summary text. */
function subagentFields(data: unknown): Json {
	const d = obj(data);
	return {
		id: text(d.id, MAX_ID),
		runId: text(d.runId, MAX_ID),
		sessionId: text(d.sessionId, MAX_PATH),
		completionOwnerId: text(d.completionOwnerId, MAX_ID),
		lifecycleArtifactVersion: int(d.lifecycleArtifactVersion),
		success: bool(d.success),
		awaitedByWorkflow: bool(d.awaitedByWorkflow),
	};
}

export default function cuewrapBridge(pi: ExtensionAPI): void {
	const config = takeConfig();
	const s = stash();
	s.loads = (s.loads ?? 0) + 1;
	if (s.fault === "reload" && s.loads === 2) {
		s.fault = undefined;
		throw new Error("cuewrap bridge: injected fault (this /reload fails)");
	}
	const channel = new Channel(config);
	if (config) {
		try {
			wrapStdout();
			const p = stash().provenance;
			if (p) {
				p.sink = channel.sink;
				p.direct = false; // this runtime takes Pi's own writes over
			}
		} catch {
			// no provenance: the frame rule stays (cuewrap sees no mark)
		}
	}

	const forward = <E>(event: string, build: (e: E, ctx: ExtensionContext) => Json | undefined) => {
		pi.on(event as "agent_start", ((e: E, ctx: ExtensionContext) => {
			try {
				channel.remember(ctx);
				const message = build(e, ctx);
				if (message && channel.active) channel.send(message);
			} catch {
				// never disturb Pi
			}
		}) as never);
	};

	forward<Json>("session_start", (e, ctx) => {
		markHeadless(ctx);
		return {
			type: "session_start",
			reason: word(e.reason) ?? null,
			sessionId: text(ctx.sessionManager.getSessionId(), MAX_ID) ?? null,
			sessionFile: text(ctx.sessionManager.getSessionFile(), MAX_PATH) ?? null,
		};
	});
	pi.on("session_shutdown", (e, ctx) => {
		try {
			channel.remember(ctx);
			const reason = word(e.reason);
			if (channel.active) channel.send({ type: "session_shutdown", reason: reason ?? null });
			channel.end(reason);
		} catch {
			// never disturb Pi
		}
	});
	forward<Json>("input", (e) => ({ type: "input", source: word(e.source) ?? null }));
	forward<Json>("agent_start", () => ({ type: "agent_start" }));
	// the text fields below are built only when summaries are on: otherwise never even read
	forward<Json>("agent_end", (e) => ({
		type: "agent_end",
		stopReason: lastStopReason(e.messages),
		summary: channel.summary ? endSummary(e.messages) : undefined,
	}));
	forward<Json>("agent_before_settle", (e) => ({
		type: "agent_before_settle",
		outcome: word(e.outcome) ?? null,
	}));
	forward<Json>("agent_settled", (e) => ({ type: "agent_settled", aborted: bool(e.aborted) }));
	forward<Json>("tool_execution_start", (e) => ({
		type: "tool_execution_start",
		toolCallId: text(e.toolCallId, MAX_ID),
		toolName: text(e.toolName, MAX_NAME),
		summary: channel.summary && e.toolName === ASK_TOOL ? askQuestion(e.args) : undefined,
		dialog: e.toolName === ASK_TOOL ? channel.askCheck(e.args) : undefined,
	}));
	forward<Json>("tool_execution_end", (e) => ({
		type: "tool_execution_end",
		toolCallId: text(e.toolCallId, MAX_ID),
		toolName: text(e.toolName, MAX_NAME),
		isError: bool(e.isError),
	}));
	forward<Json>("ui_prompt_start", (e) => ({
		type: "ui_prompt_start",
		kind: word(e.kind) ?? null,
		summary: channel.summary ? oneLine(e.title) : undefined,
		// for cuewrap's check of the dialog on the screen before an answer from elsewhere
		// (docs/answering.md): the title's length and MAC, never its text
		dialog: e.kind === "confirm" || e.kind === "select" ? channel.titleCheck(e.title) : undefined,
	}));
	// with the option the dialog closed with, once its promise has settled (it has, or does in
	// a moment: Pi emits ui_prompt_end from its own .finally of that promise)
	pi.on("ui_prompt_end", (e, ctx) => {
		try {
			channel.remember(ctx);
			const kind = word(e.kind) ?? null;
			const option = channel.takeOption(kind);
			let sent = false;
			const send = (taken?: number): void => {
				if (sent) return;
				sent = true;
				if (channel.active) channel.send({ type: "ui_prompt_end", kind, option: taken });
			};
			if (option === undefined) {
				send();
				return;
			}
			option.then(send, () => send());
			const timer = setTimeout(() => send(), TAKEN_WAIT_MS);
			timer.unref?.();
		} catch {
			// never disturb Pi
		}
	});

	// pi.events: exactly these channels. No context comes with them: they use the last one.
	const bus = (channelName: string, build: (data: unknown) => Json) => {
		try {
			pi.events.on(channelName, (data: unknown) => {
				try {
					if (channel.active) channel.send({ type: channelName, ...build(data) });
				} catch {
					// never disturb Pi
				}
			});
		} catch {
			// no event bus: nothing to forward
		}
	};
	bus("rpiv:ask-user:blocked", (data) => {
		const d = obj(data);
		return { active: bool(d.active), toolCallId: text(d.toolCallId, MAX_ID) };
	});
	const withParent = (data: unknown): Json => ({
		...subagentFields(data),
		parent: channel.parent,
		ownerNow: ownerNow(),
	});
	bus("subagent:async-started", withParent);
	bus("subagent:async-complete", withParent);
	bus("subagent:foreground-complete", (data) => {
		const d = obj(data);
		return { runId: text(d.runId, MAX_ID), id: text(d.id, MAX_ID) };
	});

	pi.registerCommand("cue", {
		description:
			"cuewrap: show what cuewrap observes; /cue on|off toggles cues; /cue mute [30m|2h|…] or /cue unmute",
		handler: async (args, ctx) => {
			try {
				channel.remember(ctx);
				const a = args.trim().toLowerCase();
				const action =
					a === "" || a === "status"
						? "status"
						: a === "on" || a === "off" || a === "unmute" || /^mute( [0-9]{1,7}[smhd]?)?$/.test(a)
							? a
							: undefined;
				if (action === undefined) {
					ctx.ui.notify("Usage: /cue [on|off|mute [DURATION]|unmute]", "warning");
					return;
				}
				const reply = await channel.request(action);
				if (reply !== undefined) {
					ctx.ui.notify(reply, "info");
				} else {
					ctx.ui.notify(channel.why, "warning");
				}
			} catch {
				// never disturb Pi
			}
		},
	});
}
