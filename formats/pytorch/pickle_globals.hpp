#pragma once
// Which global names the restricted unpickler (pickle.hpp) lets a pickle mention, beyond the functions it applies.
//
// Two kinds. Inert names are values in their own right, as torch.load(weights_only=True) accepts them: a dtype
// (torch.float16, stored in a checkpoint as {'dtype': torch.float16}) or a quantization scheme. Model classes are
// the names a whole-model pickle (torch.save(model)) instantiates as data: torch.nn.* (torch's modules), __main__.*
// (the script's own classes), argparse.Namespace (PyTorch Lightning's hyper-parameters) and the classes of a
// package of the user's (net.Net, torchvision.models.resnet.ResNet). A package's classes are told apart from code
// that runs by where they live: nothing from Python's standard library (os, subprocess, builtins, posix, nt, sys and
// the other 300 modules of Python 3.12; a private _module), from torch outside torch.nn, or from the packages that
// load and run code (numpy, dill, cloudpickle, joblib, pip, setuptools, pkg_resources, IPython) is a model class,
// and every part of the name must be a Python identifier.

#include <string>

namespace wavg::pytorch {

// Tells whether `full` (module.name) is a value torch.load(weights_only=True) accepts as it is: a torch dtype or
// quantization scheme.
bool inert_global(const std::string& full);

// Tells whether `full` names a torch dtype (torch.float16, torch.float8_e4m3fn, ...; not a quantization scheme).
bool torch_dtype(const std::string& full);

// Tells whether module.name may be a class a whole-model pickle instantiates (see above).
bool model_class(const std::string& module, const std::string& name);

}  // namespace wavg::pytorch
