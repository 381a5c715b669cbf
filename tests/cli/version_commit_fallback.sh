# The commit --version names is found at build time by src/cli/commit.cmake: a git checkout's `git describe`, and
# "unknown" for a source tree outside git (a release tarball), also when that tree is unpacked inside another
# repository (whose commit is not the tree's). The header is rewritten only when its text changes.
command -v cmake > /dev/null || { echo "no cmake"; exit 77; }
script=$ROOT/src/cli/commit.cmake
mkdir tarball
cmake -DSOURCE_DIR="$PWD/tarball" -DOUT=plain.hpp -P "$script"
grep -o 'k_commit = "[^"]*"' plain.hpp
if command -v git > /dev/null; then
  git init -q outer && mkdir outer/wavg-0.1.0
  git -C outer -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
  cmake -DSOURCE_DIR="$PWD/outer/wavg-0.1.0" -DOUT=nested.hpp -P "$script"
  grep -o 'k_commit = "[^"]*"' nested.hpp
  cmake -DSOURCE_DIR="$PWD/outer" -DOUT=repo.hpp -P "$script"
  [ "$(grep -o 'k_commit = "[^"]*"' repo.hpp)" = "k_commit = \"$(git -C outer rev-parse --short=12 HEAD)\"" ]
  touch -d '2001-01-01' repo.hpp
  cmake -DSOURCE_DIR="$PWD/outer" -DOUT=repo.hpp -P "$script"
  [ "$(date -r repo.hpp +%Y)" = 2001 ] && echo "unchanged header left alone"
else
  echo 'k_commit = "unknown"'
  echo "unchanged header left alone"
fi
