"""The command line: the `volfix` commands (`commands`), the parsed `Options` (`options`), where
their text goes (`output`), the interactive review of fixes (`interactive`), `volfix rule`'s
table and documentation (`rules`), one file on standard input (`stdin`) and the progress bar
(`progress`). Nothing under this package is imported by the layers below it."""
