#!/bin/sh
# A local "model" for the command provider of tests/lua/llm_spec.lua.
#   fake_model.sh echo   answers with its stdin inside a cuda fence, with no
#                        final newline
#   fake_model.sh fail   complains on stderr and exits 3
#   fake_model.sh hang   never answers
case "$1" in
  echo)
    input=$(cat)
    printf 'Model %s says:\n```cuda\n%s\n```' "$KLINEAGE_LLM_MODEL" "$input"
    ;;
  fail)
    cat >/dev/null
    echo "fake_model: out of credits for key $2" >&2
    exit 3
    ;;
  hang)
    exec sleep 30
    ;;
esac
