"""Reading Python text: the one parse (`document`), positions and comments (`positions`), the one
walk over a module (`index`), which local names mean torch objects (`names`), `async=` keywords
that Python 3.7+ cannot parse (`async_keywords`), big module-level scripts (`big_files`), deeply
nested trees (`deep`) and why legacy text is not Python 3 (`py2`)."""
