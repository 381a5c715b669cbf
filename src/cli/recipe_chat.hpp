#pragma once
// A recipe's chat_template, as mergekit 0.1.5 sets it on the output's tokenizer: `auto` takes the template most of
// the recipe's models carry (base_model first, then models in order; equal counts go to the earlier model, where
// mergekit's set of models has no order), and a literal Jinja text is taken as it is. The output folder carries it
// twice, so that every transformers version loads it: in chat_template.jinja (which transformers >= 4.43 reads
// first, and writes) and as tokenizer_config.json's chat_template (which older versions read).

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace wavg::cli {

// Returns the text of a tokenizer or config file of a model folder (at most 64 MiB), or nothing when there is no
// such file. Throws Error (exit 1) when it is larger or cannot be read.
std::optional<std::string> read_tokenizer_file(const std::filesystem::path& path);

// Returns the chat template of the model in `folder`: its chat_template.jinja, else tokenizer_config.json's
// chat_template (a string, or the entry named "default" of a list of {name, template}); empty when it has none.
// Throws Error (exit 1) naming a file that is there but cannot be read or is not JSON.
std::string model_chat_template(const std::string& folder);

// Returns the template `setting` (a recipe's chat_template) gives for `models` (base first): auto's choice, with
// surrounding white space removed as mergekit does, or empty when no model has one; else `setting` itself.
std::string resolve_chat_template(const std::string& setting, const std::vector<std::string>& models);

// Returns the files (name, content) that give the output folder the template `text`: chat_template.jinja and the
// tokenizer_config.json of `donor` (the folder the output's tokenizer comes from) with chat_template set. Throws a
// usage error (exit 2) when the donor has no tokenizer_config.json: the output would have no tokenizer to hold it.
// `donor_config`, when given, is that tokenizer_config.json's text as the output has it (a tokenizer merge's).
std::vector<std::pair<std::string, std::string>> chat_template_files(const std::string& donor, const std::string& text,
                                                                     std::optional<std::string> donor_config = {});

}  // namespace wavg::cli
