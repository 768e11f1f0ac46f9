"""``cuewrap phone``: the phone in one step, and ``cuewrap phone --check`` (docs/phone.md).

``cuewrap phone [--server URL] [--topic NAME] [--reply-topic NAME] [--wait SECONDS]
[--no-test]`` makes two unguessable topics (or takes the ones given, or those already set),
saves them with ``phone.enabled = true`` in the settings file, shows the ``ntfy://`` link to
the reminders' topic and its QR code (for the phone's camera: the link opens the ntfy app,
which subscribes), then sends a test reminder with a "Test" button and waits for the button's
answer on the reply topic: it says when the answer came back, and the reminder says so too.

``cuewrap phone --check`` says what works: the server (``/v1/health``), the access token
(reading the reminders' topic), the buttons' token (it must not read the reminders), and the
last round trip. Exit 0 when nothing failed.

Blocking HTTP is fine here: this is a command of its own, not a session.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

from cuewrap import ntfy
from cuewrap.args import Args, err
from cuewrap.config import ConfigError, PhoneSettings, Settings, find_key, load_settings

USAGE = """\
usage: cuewrap phone [--server URL] [--topic NAME] [--reply-topic NAME] [--wait SECONDS]
                     [--no-test]
       cuewrap phone --check
"""
WAIT = 120.0  # seconds the test waits for the button by default
TIMEOUT = 10.0  # seconds per request
STATE = "phone.json"  # the last round trip, in cuewrap's state directory


class _Usage(Exception):
    pass


def phone_command(args: Args, env: Mapping[str, str] | None = None) -> int:
    env = dict(os.environ if env is None else env)
    try:
        opts = _parse(args.command)
        settings = load_settings(args.config, env, {})
    except _Usage as exc:
        err(f"phone: {exc}")
        sys.stderr.write(USAGE)
        return 2
    except ConfigError as exc:
        err(str(exc))
        return 2
    if opts.get("check"):
        lines, ok = check(settings.phone, env)
        for line in lines:
            _out(line)
        return 0 if ok else 1
    return setup(args, settings, env, opts)


def _parse(argv: Sequence[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    names = {"--server": "server", "--topic": "topic", "--reply-topic": "reply_topic",
             "--wait": "wait"}  # fmt: skip
    i = 0
    while i < len(argv):
        a = argv[i]
        name, eq, value = a.partition("=")
        if a in ("--check", "--no-test"):
            opts[a[2:].replace("-", "_")] = True
        elif name in names:
            if not eq:
                if i + 1 >= len(argv):
                    raise _Usage(f"{name} needs a value")
                i += 1
                value = argv[i]
            opts[names[name]] = value
        else:
            raise _Usage(f"unknown argument {a!r}")
        i += 1
    if "wait" in opts:
        try:
            opts["wait"] = float(opts["wait"])
        except ValueError:
            raise _Usage("--wait takes a number of seconds") from None
    return opts


# -- setting up -------------------------------------------------------------------------------
def setup(args: Args, settings: Settings, env: Mapping[str, str], opts: dict[str, Any]) -> int:
    from cuewrap.configure.store import ConfigFile, config_path

    phone = settings.phone
    server = str(opts.get("server") or phone.ntfy_server)
    topic = str(opts.get("topic") or phone.topic or ntfy.new_topic("cuewrap"))
    reply = str(opts.get("reply_topic") or phone.reply_topic or ntfy.new_topic("cuewrap-answers"))
    for label, name in (("topic", topic), ("reply topic", reply)):
        why = ntfy.check_topic(name)
        if why:
            err(f"phone: the {label}: {why}")
            return 2
    why = ntfy.check_server(server)
    if why or topic == reply:
        err(f"phone: {why or 'the topic and the reply topic must differ'}")
        return 2
    path = config_path(args.config, env)
    file = ConfigFile(path)
    for key, value in (("enabled", True), ("ntfy_server", ntfy.base(server)), ("topic", topic),
                       ("reply_topic", reply)):  # fmt: skip
        spec = find_key(f"phone.{key}")
        assert spec is not None
        if key != "ntfy_server" or value != spec.default or file.get(spec) is not None:
            file.set(spec, value)
    file.save()
    _out(f"saved in {path}: phone.enabled, phone.topic, phone.reply_topic")
    link = ntfy.subscribe_link(server, topic)
    _out("")
    _out("Subscribe on your phone: scan this with its camera (it opens the ntfy app),")
    _out(f"or add the topic {topic} on {ntfy.base(server)} in the ntfy app.")
    _out("")
    sys.stdout.write(qr_text(link))
    _out("")
    _out(link)
    _out("")
    if phone.token is None and phone.token_command is None and "ntfy.sh" not in server:
        _out("note: no access token set (phone.token_command or CUEWRAP_PHONE_TOKEN)")
    if opts.get("no_test"):
        return 0
    phone = phone._replace(ntfy_server=ntfy.base(server), topic=topic, reply_topic=reply)
    return round_trip(phone, env, float(opts.get("wait", WAIT)))


def qr_text(data: str) -> str:
    """``data``'s QR code for a terminal: two modules a character (upper and lower half
    blocks), black on white whatever the terminal's colours, with its quiet zone."""
    import segno

    qr = segno.make(data, error="m", boost_error=False)
    rows = [list(row) for row in qr.matrix_iter(scale=1, border=2)]
    if len(rows) % 2:
        rows.append([0] * len(rows[0]))
    out = []
    for top, bottom in zip(rows[0::2], rows[1::2], strict=True):
        cells = "".join(" ▀▄█"[bool(t) + 2 * bool(b)] for t, b in zip(top, bottom, strict=True))
        out.append(f"\x1b[30;47m{cells}\x1b[0m\n")
    return "".join(out)


def _token(phone: PhoneSettings) -> str | None:
    if phone.token:
        return phone.token
    if phone.token_command:
        import subprocess

        try:
            done = subprocess.run(list(phone.token_command), capture_output=True,
                                  timeout=TIMEOUT, check=False)  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return None
        words = done.stdout.decode("utf-8", "replace").split()
        return words[0] if done.returncode == 0 and len(words) == 1 else None
    return None


def _request(
    server: str, method: str, path: str, token: str | None, body: dict[str, Any] | None = None
) -> tuple[int | None, bytes, str]:
    headers = {"User-Agent": "cuewrap"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(ntfy.base(server) + path, data=data, method=method,
                                 headers=headers)  # fmt: skip
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
            return resp.status, resp.read(1 << 16), ""
    except urllib.error.HTTPError as exc:
        return exc.code, b"", f"HTTP {exc.code}"
    except (OSError, ValueError) as exc:
        return None, b"", str(getattr(exc, "reason", exc))[:120]


def round_trip(phone: PhoneSettings, env: Mapping[str, str], wait: float) -> int:
    """A test reminder with a "Test" button; the button's answer waited for on the reply
    topic. 0 when it came back."""
    assert phone.topic and phone.reply_topic
    token = _token(phone)
    secret = secrets.token_urlsafe(18)
    sid = f"cuewrap-test-{secrets.token_hex(4)}"
    since = str(int(time.time()) - 1)
    msg = ntfy.reminder(
        phone.topic, sid, event="needs-input", title="cuewrap: test",
        body="Tap Test: cuewrap hears it", buttons=[(1, "Test")], token=secret,
        reply_url=f"{ntfy.base(phone.ntfy_server)}/{phone.reply_topic}",
        reply_auth=phone.reply_token,
    )  # fmt: skip
    status, _, why = _request(phone.ntfy_server, "POST", "/", token, msg)
    if status != 200:
        _out(f"the test reminder could not be sent: {why or status}")
        return 1
    _out(f"test reminder sent: tap its Test button (waiting {wait:g} s) …")
    started = time.monotonic()
    came = _wait_for(phone, token, since, secret, wait)
    if came is None:
        _out("no answer came back: is the phone subscribed, and may the button publish to the"
             " reply topic (phone.reply_token)?")  # fmt: skip
        return 1
    took = time.monotonic() - started
    _out(f"the button's answer came back after {took:.1f} s: your phone is set up")
    done = ntfy.outcome(phone.topic, sid, "cuewrap: test", "Answered: Test (the round trip works)")
    _request(phone.ntfy_server, "POST", "/", token, done)
    _save_state(env, {"round_trip": time.strftime("%Y-%m-%d %H:%M:%S"), "seconds": round(took, 1),
                      "server": ntfy.base(phone.ntfy_server)})  # fmt: skip
    return 0


def _wait_for(
    phone: PhoneSettings, token: str | None, since: str, secret: str, wait: float
) -> str | None:
    """The reply topic read until a message ``SECRET 1`` (or ``wait`` seconds pass)."""
    assert phone.reply_topic
    deadline = time.monotonic() + wait
    topic = urllib.parse.quote(phone.reply_topic, safe="")
    headers = {"User-Agent": "cuewrap"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    while time.monotonic() < deadline:
        url = f"{ntfy.base(phone.ntfy_server)}/{topic}/json?since={since}"
        left = max(0.5, deadline - time.monotonic())
        try:
            req = urllib.request.Request(url, headers=headers)
            with urllib.request.urlopen(req, timeout=min(left, 60.0)) as resp:
                for raw in resp:
                    try:
                        event = json.loads(raw)
                    except ValueError:
                        continue
                    if not isinstance(event, dict) or event.get("event") != "message":
                        continue
                    since = str(event.get("id"))[:64]
                    if ntfy.parse_reply(str(event.get("message"))) == (secret, "1"):
                        return since
                    if time.monotonic() >= deadline:
                        return None
        except (OSError, ValueError):
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
    return None


# -- checking ---------------------------------------------------------------------------------
def check(phone: PhoneSettings, env: Mapping[str, str]) -> tuple[list[str], bool]:
    """Lines saying what works, and whether nothing failed (``cuewrap doctor`` shows them)."""
    lines: list[str] = []
    ok = True
    if not phone.enabled:
        lines.append("phone: off (phone.enabled = false; `cuewrap phone` sets it up)")
        return lines, True
    if not phone.topic or not phone.reply_topic:
        return ["phone: FAIL: phone.topic and phone.reply_topic are not set: run `cuewrap phone`"
                ], False  # fmt: skip
    server = ntfy.base(phone.ntfy_server)
    status, body, why = _request(server, "GET", "/v1/health", None)
    healthy = status == 200 and b'"healthy":true' in body.replace(b" ", b"")
    lines.append(f"phone: server {server}: " + ("reachable" if healthy else
                 f"FAIL: not reachable ({why or status})"))  # fmt: skip
    ok &= healthy
    token = _token(phone)
    if phone.token_command and token is None:
        lines.append("phone: FAIL: phone.token_command printed no token")
        ok = False
    poll = f"/{urllib.parse.quote(phone.topic, safe='')}/json?poll=1&since=1s"
    if healthy:
        status, _, why = _request(server, "GET", poll, token)
        who = "with the access token" if token else "without an access token"
        read = status == 200
        lines.append(f"phone: reading the reminders' topic {who}: " +
                     ("works" if read else f"FAIL: {why or status}"))  # fmt: skip
        ok &= read
        if phone.reply_token:
            status, _, _ = _request(server, "GET", poll, phone.reply_token)
            if status == 200 or phone.reply_token == token:
                lines.append("phone: WARNING: phone.reply_token (what the buttons carry) can also"
                             " read the reminders: give it write-only access to the reply"
                             " topic")  # fmt: skip
            else:
                lines.append("phone: the buttons' token cannot read the reminders (good)")
    state = _load_state(env)
    when = state.get("round_trip")
    lines.append(f"phone: last round trip: {when} ({state.get('seconds')} s)" if when else
                 "phone: no round trip yet (`cuewrap phone` makes one)")  # fmt: skip
    return lines, ok


def _state_path(env: Mapping[str, str]) -> str:
    base = env.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "cuewrap", STATE)


def _save_state(env: Mapping[str, str], state: dict[str, Any]) -> None:
    path = _state_path(env)
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(state, fh)
    except OSError:
        pass


def _load_state(env: Mapping[str, str]) -> dict[str, Any]:
    try:
        with open(_state_path(env), encoding="utf-8") as fh:
            state = json.load(fh)
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def _out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
