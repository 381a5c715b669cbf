# A recipe's chat_template (a Jinja text, or auto) lands in the output's tokenizer files (recipe_chat_template.py).
/usr/bin/python3 "$ROOT/tests/cli/recipe_chat_template.py" "$WAVG"
