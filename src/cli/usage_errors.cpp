#include "cli/usage_errors.hpp"

#include <cctype>

#include "wavg/names.hpp"

namespace wavg::cli {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string lower_first(std::string s) {
  // "Checkpoints to average" reads as part of a sentence; "JSON ..." keeps its capitals.
  const auto upper = [&s](std::size_t i) { return std::isupper(static_cast<unsigned char>(s[i])) != 0; };
  if (s.size() > 1 && upper(0) && !upper(1)) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

// What a missing option or positional argument is called in a sentence: "--output: output checkpoint".
std::string described(const CLI::App* sub, const std::string& name) {
  const CLI::Option* opt = sub ? sub->get_option_no_throw(name) : nullptr;
  if (!opt || opt->get_description().empty()) return name;
  return name + ": " + lower_first(opt->get_description());
}

// The options of `sub` as typed (--force, -f), for a suggestion.
std::vector<std::string> option_names(const CLI::App* sub) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : sub->get_options()) {
    for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
    for (const std::string& n : opt->get_snames()) names.push_back("-" + n);
  }
  return names;
}

std::string not_a_subcommand(const std::string& word, const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(s->get_name());
  return "'" + word + "' is not a wavg subcommand" + did_you_mean(word, names);
}

// An argument nothing took: a mistyped subcommand (at the top), a mistyped option, or one argument too many.
std::string extra_message(const std::string& message, const CLI::App& app, const CLI::App* sub) {
  const std::size_t colon = message.find(": ");
  std::string word = colon == std::string::npos ? message : message.substr(colon + 2);
  word = word.substr(0, word.find(' '));
  if (const std::size_t eq = word.find('='); starts_with(word, "--") && eq != std::string::npos) word.resize(eq);
  if (starts_with(word, "-")) {
    const CLI::App& where = sub ? *sub : app;
    return (sub ? sub->get_name() + " has no option " : "no option ") + word + did_you_mean(word, option_names(&where));
  }
  if (sub) return "unexpected argument '" + word + "': " + sub->get_name() + " takes no more";
  return not_a_subcommand(word, app);
}

// A value CLI11 could not convert to the option's type.
std::string conversion_message(const std::string& message, const CLI::App* sub) {
  std::string name, value;
  if (const std::string prefix = "Could not convert: "; starts_with(message, prefix)) {
    const std::size_t eq = message.find(" = ");
    if (eq == std::string::npos) return lower_first(message);
    name = message.substr(prefix.size(), eq - prefix.size()), value = message.substr(eq + 3);
  } else if (const std::size_t for_at = message.find(" is not an allowed value for ");
             starts_with(message, "The value ") && for_at != std::string::npos) {
    value = message.substr(10, for_at - 10), name = message.substr(for_at + 29);
  } else {
    return lower_first(message);
  }
  const CLI::Option* opt = sub ? sub->get_option_no_throw(name) : nullptr;
  const std::string type = opt ? opt->get_type_name() : "";
  const std::string what = type == "INT" || type == "UINT" ? "a whole number"
                           : type == "FLOAT"               ? "a number"
                                                           : "a value " + name + " takes";
  return name + ": '" + value + "' is not " + what;
}

}  // namespace

std::string usage_message(const CLI::ParseError& e, const CLI::App& app) {
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  const CLI::App* sub = parsed.empty() ? nullptr : parsed.back();
  const std::string message = e.what();
  std::string text;
  if (dynamic_cast<const CLI::RequiredError*>(&e) && ends_with(message, " is required")) {
    const std::string name = message.substr(0, message.size() - 12);
    // A mistyped subcommand is not taken as one, so CLI11 reports none: the word is what remains.
    const std::vector<std::string> rest = app.remaining();
    if (name == "A subcommand" && !rest.empty() && !starts_with(rest.front(), "-"))
      text = not_a_subcommand(rest.front(), app);
    else if (name == "A subcommand")
      text = "give a subcommand";
    else
      text = (sub ? sub->get_name() + " needs " : "give ") + described(sub, name);
  } else if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    text = extra_message(message, app, sub);
  } else if (dynamic_cast<const CLI::ConversionError*>(&e)) {
    text = conversion_message(message, sub);
  } else if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) && ends_with(message, " missing") &&
             message.find(": ") != std::string::npos) {
    text = message.substr(0, message.find(": ")) + " needs a value";
  } else {
    text = lower_first(message);
  }
  return text + " (see wavg " + (sub ? sub->get_name() + " " : "") + "--help)";
}

}  // namespace wavg::cli
