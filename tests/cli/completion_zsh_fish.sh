# The zsh and fish scripts parse in their shells (when installed) and name every subcommand.
"$WAVG" completion zsh > _wavg
"$WAVG" completion fish > wavg.fish
for sub in $("$WAVG" --help | awk '/^Subcommands:/{on=1; next} on && /^  [a-z]/ {print $1}'); do
  grep -q "^    '$sub:" _wavg || { echo "zsh: no $sub"; exit 1; }
  grep -q "__fish_use_subcommand' -a $sub " wavg.fish || { echo "fish: no $sub"; exit 1; }
done
if command -v zsh >/dev/null; then zsh -n _wavg || exit 1; fi
if command -v fish >/dev/null; then fish -n wavg.fish || exit 1; fi
echo ok
