"""The project index: what each file defines and calls, cached by content (`facts`), and the
links between files (`index`): helpers across files and the callers of every helper (SPEC §2.6,
§2.9); how a file names the project's other modules (`modules`), which files may call a helper
(`words`) or star-import (`stars`), and a check's analysis of a caller on the parse that finds
its calls (`early`)."""
