# Sourced by scripts/test and scripts/demo: make (or reuse) the project venv and install cuewrap.
# Sets $PY to the venv's python. Quiet unless something goes wrong.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${CUEWRAP_VENV:-$root/.venv}"
pick_python() {
  for p in python3.13 python3.12 python3.11 python3; do
    if command -v "$p" >/dev/null 2>&1 &&
       "$p" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      command -v "$p"; return 0
    fi
  done
  echo "cuewrap needs Python >= 3.11" >&2; return 1
}
if [ ! -x "$venv/bin/python" ]; then
  base=$(pick_python)
  "$base" -m venv "$venv"
fi
PY="$venv/bin/python"
stamp="$venv/.cuewrap-installed"
if [ ! -f "$stamp" ] || [ "$root/pyproject.toml" -nt "$stamp" ]; then
  "$PY" -m pip install -q --disable-pip-version-check -e "$root[test]" 2>&1 | grep -v '^WARNING: Location' >&2 || true
  "$PY" -c 'import cuewrap, ptyprocess, pyte, pexpect, pytest, xdist, hypothesis' && touch "$stamp"
fi
