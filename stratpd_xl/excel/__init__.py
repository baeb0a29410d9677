"""Excel front end on the open-source (BSD-3) part of xlwings.

* ``udfs``: the cell formulas ``=STRATPD(...)`` and ``=STRATIMPACT(...)`` (Windows Excel), on
  :mod:`stratpd_xl.spreadsheet`;
* ``ribbon``: ``main()`` behind the add-in's "Analyse selection" button (Windows and macOS);
* ``pictures``: where the chart picture of a formula goes and what it is called;
* ``install``: ``python -m stratpd_xl.excel.install``, every installer step (the scripts in
  ``installer/`` only find Python and call it);
* ``addin_file``: the add-in's own settings sheet, written by the build and the installer;
* ``config``: the template's shared config file (manual setups) and ``import-udfs``.
"""
