"""LibreOffice Calc front end: an extension with ``=STRATPD``, ``=STRATIMPACT`` and a menu command.

* ``extension``: ``stratpd-xl libreoffice build|install|uninstall`` - writes the ``.oxt`` and
  adds or removes it with LibreOffice's ``unopkg``;
* ``calc_component`` and ``calc_client``: the code inside the ``.oxt``, run by LibreOffice's own
  Python (standard library and ``uno`` only): Calc's functions and the "Analyse selection"
  command, which hand the cells to the worker;
* ``worker``: ``python -m stratpd_xl.libreoffice.worker``, run from the environment where
  stratpd-xl is installed; it answers with :mod:`stratpd_xl.spreadsheet`, the formulas Excel
  uses, so both spreadsheets show the same cells and the same error texts;
* ``report``: the "Analyse selection" sheet as a plan of cell blocks and charts.
"""
