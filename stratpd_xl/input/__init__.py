"""The input layer: cells and files become one typed frame.

``sheet`` types a block of cells (Excel's, LibreOffice's or a file's) column by column and
decides which columns an analysis may use; ``files`` reads CSV and workbook files into raw
columns for it, after the workbook scans (``_workbook_scan``, ``_xls_scan``, compiled in
``_scan_kernels``) have measured what a file claims.  Nothing here imports numba, matplotlib
or xlsxwriter at import time.
"""
