// The one signal owner (signals.hpp), each case in a forked child: interrupts run every cleanup and end the
// process by the signal; faults are explained in order (a mapping before the HDF5 guard) or passed on.

#include <doctest/doctest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "hdf5/h5.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/mapped_file.hpp"
#include "wavg/signals.hpp"
#include "wavg/temp_file.hpp"

using namespace wavg;

TEST_CASE("SIGINT removes the temporary output, what a library made beside it, and scratch files, then kills") {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    test::TempDir out_dir, scratch_dir;
    const auto r = test::run_in_child([&] {
      ::setenv("TMPDIR", scratch_dir.path().c_str(), 1);
      AtomicFile out(out_dir / "model.keras", Overwrite::no);
      // libzip writes the archive to NAME.XXXXXX beside NAME and renames it in zip_close.
      std::ofstream(out.tmp_path() + ".a1B2c3") << "partial zip";
      const TempFile scratch("keras", ".weights.h5", "in.keras");
      std::ofstream(scratch.path()) << "extracted weights";
      std::raise(sig);
      ::_exit(10);  // not reached
    });
    CHECK(r.exit_code == 128 + sig);
    CHECK(r.err.empty());
    CHECK(test::count_entries(out_dir.path()) == 0);
    CHECK(test::count_entries(scratch_dir.path()) == 0);
  }
}

TEST_CASE("an interrupt that another thread receives waits for the deferring thread's step, then cleans up") {
  test::TempDir out_dir;
  const auto r = test::run_in_child([&] {
    AtomicFile out(out_dir / "model.safetensors", Overwrite::no);
    {
      const signals::DeferInterrupts deferred;
      // A thread that does not block the signal receives it (as a hash thread or an OpenMP worker would); its
      // handler must leave the cleanups to the end of this step.
      std::thread([] {
        sigset_t term;  // a new thread starts with its creator's mask: open it, as a worker made earlier would be
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        ::pthread_sigmask(SIG_UNBLOCK, &term, nullptr);
        ::kill(::getpid(), SIGTERM);
      }).join();
      ::usleep(100'000);
      std::ofstream(out_dir / "made while deferred") << "the step ran whole";
      if (test::count_entries(out_dir.path()) != 3) ::_exit(11);  // the temporary output, its lock and this file
    }
    ::_exit(10);  // not reached: the deferred signal ends the process here
  });
  CHECK(r.exit_code == 128 + SIGTERM);
  CHECK(test::count_entries(out_dir.path()) == 1);  // the temporary output and lock removed, the step's file kept
  CHECK(std::filesystem::exists(out_dir / "made while deferred"));
}

TEST_CASE("a file next to the output that only shares a prefix with its temporary file is left alone") {
  test::TempDir dir;
  const auto r = test::run_in_child([&] {
    AtomicFile out(dir / "x.h5", Overwrite::no);
    std::ofstream(out.tmp_path() + "not-ours") << "x";
    std::ofstream(dir / "x.h5.other") << "x";
    std::raise(SIGINT);
  });
  CHECK(r.exit_code == 128 + SIGINT);
  CHECK(test::count_entries(dir.path()) == 2);
}

TEST_CASE("a TempFile is private, named after its prefix and suffix, and gone with its owner") {
  std::string path;
  {
    const TempFile t("keras", ".weights.h5", "in.keras");
    path = t.path();
    CHECK(std::filesystem::path(path).filename().string().rfind("wavg-keras-", 0) == 0);
    CHECK(path.substr(path.size() - 11) == ".weights.h5");
    CHECK((std::filesystem::status(path).permissions() & std::filesystem::perms::others_read) ==
          std::filesystem::perms::none);
  }
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("a crash inside an HDF5 call is reported as the guarded file's, with outputs removed") {
  test::TempDir dir;
  const auto r = test::run_in_child([&] {
    AtomicFile out(dir / "out.h5", Overwrite::no);
    const h5::CrashGuard guard("bad.h5");
    std::raise(SIGSEGV);
  });
  CHECK(r.exit_code == 1);
  CHECK(r.err == "wavg: error: bad.h5: corrupt HDF5 file (the HDF5 library failed reading it)\n");
  CHECK(test::count_entries(dir.path()) == 0);
}

TEST_CASE("a fault outside any guard keeps its default action") {
  const auto r = test::run_in_child([] {
    { const h5::CrashGuard guard("bad.h5"); }
    std::raise(SIGSEGV);
  });
#if defined(__SANITIZE_ADDRESS__)
  // Under AddressSanitizer the handler that was there before wavg's is ASan's own: it reports and exits 1. What
  // matters is the same: wavg says nothing of its own and does not swallow the fault.
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("wavg: error") == std::string::npos);
#else
  CHECK(r.exit_code == 128 + SIGSEGV);
  CHECK(r.err.empty());
#endif
}

TEST_CASE("SIGBUS on a truncated mapping names the mapped file, even inside an HDF5 call") {
  test::TempDir dir;
  const std::string path = dir.write("in.bin", std::string(1 << 16, 'x'));
  const auto r = test::run_in_child([&] {
    const MappedFile map(path);
    const h5::CrashGuard guard("other.h5");
    if (::truncate(path.c_str(), 0) != 0) ::_exit(11);
    volatile unsigned char c = map.data()[(1 << 16) - 1];
    (void)c;
    ::_exit(12);  // not reached: the read above faults
  });
  CHECK(r.exit_code == 1);
  CHECK(r.err ==
        "wavg: error: " + path + ": the file shrank while wavg was reading it (changed by another program?)\n");
}
