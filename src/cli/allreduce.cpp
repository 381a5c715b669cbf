// wavg allreduce: under mpirun, average the one checkpoint each rank holds into one output written by rank 0.

#include <cstdio>
#include <filesystem>

#include "cli/common.hpp"
#include "train/mpi.hpp"
#include "wavg/error.hpp"

namespace wavg::cli {

namespace {

struct AllreduceOptions {
  std::string input;
  std::string output;
  std::string format;
  bool force = false;
  train::Reduction reduction = train::Reduction::reduce_scatter;
  std::string stats;
  Verbosity verbosity;
};

int run_allreduce(const AllreduceOptions& o) {
  output_format(o.output, o.format);  // refuses an unknown --format before MPI starts
  return train::with_mpi([&] {
    train::AllreduceJob job;
    job.input = o.input;
    job.output.path = o.output;
    job.output.format = o.format;
    job.output.overwrite = o.force ? Overwrite::yes : Overwrite::no;
    job.reduction = o.reduction;
    job.stats = o.stats;
    const int ranks = train::allreduce_checkpoint(job);
    if (train::mpi_rank() == 0 && !o.verbosity.quiet)
      std::printf("averaged %d checkpoints into %s\n", ranks, o.output.c_str());
    return 0;
  });
}

}  // namespace

RunFn setup_allreduce(CLI::App& app) {
  auto o = std::make_shared<AllreduceOptions>();
  app.add_option("input", o->input, "This rank's checkpoint")->required();
  add_output(app, o->output, o->format, o->force, "Output checkpoint, written by rank 0",
             "Replace an existing output (and --stats file)");
  add_reduction_options(app, o->reduction, o->stats);
  add_verbosity(app, o->verbosity);
  return [o] { return run_allreduce(*o); };
}

}  // namespace wavg::cli
