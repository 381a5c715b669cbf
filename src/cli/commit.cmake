# Writes OUT, a header holding the commit wavg is built from (`git describe --always --dirty` of SOURCE_DIR), for
# `wavg --version`. Run at every build, not at configure time, so a build after a commit names the new one; the
# header is rewritten only when its text changes, so that only main.cpp recompiles then. Outside a git checkout
# of its own (a release tarball, even one unpacked inside another repository) or without git, the commit is
# "unknown".
set(commit "unknown")
find_program(git_program git)
if(git_program)
  execute_process(COMMAND ${git_program} -C ${SOURCE_DIR} rev-parse --show-toplevel
                  OUTPUT_VARIABLE top OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0)
    file(REAL_PATH "${top}" top)
    file(REAL_PATH "${SOURCE_DIR}" source)
  endif()
  if(rc EQUAL 0 AND top STREQUAL source)
    execute_process(COMMAND ${git_program} -C ${SOURCE_DIR} describe --always --dirty --abbrev=12
                    OUTPUT_VARIABLE described OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND described MATCHES "^[0-9A-Za-z._+-]+$")
      set(commit "${described}")
    endif()
  endif()
endif()
set(text "#pragma once\n// Generated at build time by src/cli/commit.cmake.\nnamespace wavg {\ninline constexpr const char* k_commit = \"${commit}\";\n}\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
