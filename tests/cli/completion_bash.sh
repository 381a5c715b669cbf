# The bash completion script: sourcing it registers _wavg for wavg, and it completes subcommands, options, enum
# values, and file names for inputs and outputs (nothing for numbers and lists).
"$WAVG" completion bash > wavg.bash
touch model_a.h5 model_b.h5
bash -c '
source ./wavg.bash
complete -p wavg
complete_words() {
  COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _wavg; printf "%s\n" "${COMPREPLY[@]}" | sort | paste -sd " "
}
complete_words wavg me
complete_words wavg merge --int-p
complete_words wavg merge --int-policy ""
complete_words wavg merge model_a.h5 --device ""
complete_words wavg merge model_
complete_words wavg merge -o mod
complete_words wavg merge -j ""
complete_words wavg merge -w ""
complete_words wavg completion ""
'
