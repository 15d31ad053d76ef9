"""The flow engine: definitions and uses (`defuse`), volatile taint through values, calls and
helpers (`taint`, `values`, `calls`, `helper_calls`, `follow`), code that trains (`trains`) and
existing grad-mode code (`grad_mode`)."""
