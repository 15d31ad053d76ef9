"""The flow engine: definitions and uses (`defuse`), volatile taint through values, calls and
helpers (`taint`, `values`, `calls`, `helper_calls`, `follow`), flags a constructor stored on
an instance (`instances`), code that trains (`trains`) and existing grad-mode code
(`grad_mode`)."""
