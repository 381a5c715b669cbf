# local-sgd shows run folders only with --plot or --json, and not beside a training's options; a folder without a
# log is one clean error.
set +e
"$WAVG" local-sgd run1
echo "exit $?"
"$WAVG" local-sgd run1 --json --data d.csv
echo "exit $?"
"$WAVG" local-sgd run1 --json
echo "exit $?"
mkdir run2 && echo "round,step" >run2/log.csv
"$WAVG" local-sgd run2 --json
echo "exit $?"
"$WAVG" local-sgd --train-cmd 'true' --init i.h5 --out-dir r --plot p.svg
echo "exit $?"
