# Sourced by scripts/test and scripts/serve: make .venv and install the project into it.
# Expects ROOT, VENV, PY and the say/die functions; PYTHON picks the interpreter (default python3).
# EXTRAS names the optional dependencies to add ("" for scripts/serve: the runtime only; "test"
# for scripts/test: pytest, mypy, ruff, Playwright, Schemathesis...).
# The install is skipped while pyproject.toml is unchanged and the extras installed cover
# EXTRAS (a .venv made by scripts/test also serves; one made by scripts/serve gets the test
# tools added the first time scripts/test runs). The stamp in the venv keeps the hash and extras.
EXTRAS="${EXTRAS:-}"
if [ ! -x "$PY" ]; then
    say "creating .venv"
    "${PYTHON:-python3}" -m venv "$VENV"
fi
STAMP="$VENV/.manifest-install-stamp"
WANT="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
HAVE_HASH=""; HAVE_EXTRAS=""
if [ -f "$STAMP" ]; then
    read -r HAVE_HASH HAVE_EXTRAS < "$STAMP" || true
fi
if [ "$HAVE_HASH" != "$WANT" ] || { [ -n "$EXTRAS" ] && [ "$HAVE_EXTRAS" != "$EXTRAS" ]; }; then
    SPEC="."
    [ -n "$EXTRAS" ] && SPEC=".[$EXTRAS]"
    say "installing $SPEC into .venv (a minute or two on a fresh machine)"
    PIP_LOG="$VENV/.manifest-pip.log"
    : > "$PIP_LOG"
    # pip's whole output goes to the log; each package it collects is said as it goes, so a
    # first install shows progress instead of a silent minute
    if ! (cd "$ROOT" && "$PY" -m pip install --disable-pip-version-check -e "$SPEC" </dev/null 2>&1 \
            | while IFS= read -r line; do
                printf '%s\n' "$line" >> "$PIP_LOG"
                case "$line" in
                    Collecting\ *) say "  ${line%% (*}";;
                    Installing\ collected\ *) say "  installing the packages collected";;
                esac
            done); then
        tail -n 40 "$PIP_LOG" >&2
        die "pip install failed (full log: $PIP_LOG)"
    fi
    printf '%s %s\n' "$WANT" "$EXTRAS" > "$STAMP"
fi
