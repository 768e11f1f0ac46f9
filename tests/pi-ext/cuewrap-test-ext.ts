/**
 * cuewrap test extension — loaded into real Pi by the test rig with `-e`.
 *
 * Tools (the fake model can call them):
 *   test_confirm {title?, message?}   raises ctx.ui.confirm(title ?? "Test", message ?? "Proceed?")
 *                                     inside a run; returns "confirmed: yes" / "confirmed: no".
 *   test_select {title?, options?}    raises ctx.ui.select(title ?? "Pick one", options ?? Alpha/Beta/Gamma)
 *                                     inside a run; returns "selected: <option>" / "selected: none".
 *   test_bus {channel, data}          pi.events.emit(channel, data) during a run.
 *   test_owner {id}                   sets the pi-subagents completion owner id (tests only).
 * Commands (typed in the editor, outside a run):
 *   /testconfirm [message]            the same confirm dialog, outside a run; notifies the answer.
 *   /testselect [title|opt1|opt2|...] ctx.ui.select(title, options) (default "Pick one", Alpha/Beta/Gamma);
 *                                     notifies "cuewrap-test: selected <n> <option>" or "selected none".
 *   /testbus <channel> <json>         pi.events.emit(channel, JSON.parse(json)).
 *   /testowner <uuid>                 globalThis[Symbol.for("pi-subagents.completion-owner-id")] = uuid.
 *   /testinfo                         notifies mode, session id and file, and the owner id.
 * Every effect is also shown as a notify line starting with "cuewrap-test:" so a test can
 * wait for it on the screen.
 */

import { Type } from "@earendil-works/pi-ai";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

const OWNER_KEY = Symbol.for("pi-subagents.completion-owner-id");

function setOwner(id: string): void {
	(globalThis as Record<symbol, unknown>)[OWNER_KEY] = id;
}

function parseJson(text: string): unknown {
	const t = text.trim();
	if (t === "") return {};
	return JSON.parse(t);
}

function info(ctx: ExtensionContext): string {
	const owner = (globalThis as Record<symbol, unknown>)[OWNER_KEY];
	return JSON.stringify({
		mode: (ctx as { mode?: string }).mode,
		hasUI: ctx.hasUI,
		sessionId: ctx.sessionManager.getSessionId(),
		sessionFile: ctx.sessionManager.getSessionFile() ?? null,
		owner: typeof owner === "string" ? owner : null,
	});
}

export default function (pi: ExtensionAPI) {
	pi.registerTool({
		name: "test_confirm",
		label: "Test Confirm",
		description: "Ask the user to confirm (cuewrap test tool).",
		parameters: Type.Object({
			title: Type.Optional(Type.String({ description: "Dialog title" })),
			message: Type.Optional(Type.String({ description: "Dialog message" })),
		}),
		async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
			const p = params as { title?: string; message?: string };
			const yes = ctx.hasUI ? await ctx.ui.confirm(p.title ?? "Test", p.message ?? "Proceed?") : false;
			return {
				content: [{ type: "text", text: `confirmed: ${yes ? "yes" : "no"}` }],
				details: { confirmed: yes },
			};
		},
	});

	pi.registerTool({
		name: "test_select",
		label: "Test Select",
		description: "Ask the user to pick one option (cuewrap test tool).",
		parameters: Type.Object({
			title: Type.Optional(Type.String({ description: "Dialog title" })),
			options: Type.Optional(Type.Array(Type.String(), { description: "Options" })),
		}),
		async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
			const p = params as { title?: string; options?: string[] };
			const options = p.options ?? ["Alpha", "Beta", "Gamma"];
			const choice = ctx.hasUI ? await ctx.ui.select(p.title ?? "Pick one", options) : undefined;
			return {
				content: [{ type: "text", text: `selected: ${choice ?? "none"}` }],
				details: { choice: choice ?? null },
			};
		},
	});

	pi.registerTool({
		name: "test_bus",
		label: "Test Bus",
		description: "Emit an event on the extension bus (cuewrap test tool).",
		parameters: Type.Object({
			channel: Type.String({ description: "Channel name" }),
			data: Type.Optional(Type.Any({ description: "Payload" })),
		}),
		async execute(_toolCallId, params) {
			const p = params as { channel: string; data?: unknown };
			pi.events.emit(p.channel, p.data ?? {});
			return { content: [{ type: "text", text: `emitted ${p.channel}` }], details: {} };
		},
	});

	pi.registerTool({
		name: "test_owner",
		label: "Test Owner",
		description: "Set the pi-subagents completion owner id (cuewrap test tool).",
		parameters: Type.Object({ id: Type.String({ description: "Owner UUID" }) }),
		async execute(_toolCallId, params) {
			const p = params as { id: string };
			setOwner(p.id);
			return { content: [{ type: "text", text: `owner ${p.id}` }], details: {} };
		},
	});

	pi.registerCommand("testconfirm", {
		description: "cuewrap test: show a confirm dialog",
		handler: async (args, ctx) => {
			const yes = await ctx.ui.confirm("Test", args.trim() || "Proceed?");
			ctx.ui.notify(`cuewrap-test: confirmed ${yes ? "yes" : "no"}`, "info");
		},
	});

	pi.registerCommand("testselect", {
		description: "cuewrap test: show a select dialog (usage: /testselect title|opt1|opt2|...)",
		handler: async (args, ctx) => {
			const parts = args.trim() ? args.trim().split("|") : [];
			const title = parts[0] || "Pick one";
			const options = parts.length > 1 ? parts.slice(1) : ["Alpha", "Beta", "Gamma"];
			const choice = await ctx.ui.select(title, options);
			const n = choice === undefined ? -1 : options.indexOf(choice);
			ctx.ui.notify(choice === undefined ? "cuewrap-test: selected none" : `cuewrap-test: selected ${n + 1} ${choice}`, "info");
		},
	});

	pi.registerCommand("testbus", {
		description: "cuewrap test: emit on pi.events (usage: /testbus <channel> <json>)",
		handler: async (args, ctx) => {
			const trimmed = args.trim();
			const sp = trimmed.search(/\s/);
			const channel = sp < 0 ? trimmed : trimmed.slice(0, sp);
			const rest = sp < 0 ? "" : trimmed.slice(sp + 1);
			if (!channel) {
				ctx.ui.notify("cuewrap-test: usage /testbus <channel> <json>", "error");
				return;
			}
			let data: unknown;
			try {
				data = parseJson(rest);
			} catch (e) {
				ctx.ui.notify(`cuewrap-test: bad json: ${e instanceof Error ? e.message : String(e)}`, "error");
				return;
			}
			pi.events.emit(channel, data);
			ctx.ui.notify(`cuewrap-test: emitted ${channel}`, "info");
		},
	});

	pi.registerCommand("testowner", {
		description: "cuewrap test: set the pi-subagents completion owner id",
		handler: async (args, ctx) => {
			const id = args.trim();
			setOwner(id);
			ctx.ui.notify(`cuewrap-test: owner ${id}`, "info");
		},
	});

	pi.registerCommand("testinfo", {
		description: "cuewrap test: show mode, session and owner",
		handler: async (_args, ctx) => {
			ctx.ui.notify(`cuewrap-test: info ${info(ctx)}`, "info");
		},
	});
}
