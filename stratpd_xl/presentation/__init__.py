"""The presentation layer: labels, tables, charts and the workbook report of engine results.

``labels`` and ``tables`` turn results into headed, formatted tables; ``charts`` draws them
with matplotlib (Agg); ``drawing`` runs the drawing in this process or in a helper process
(``_picture_helper``); ``report`` writes the .xlsx workbook.  Nothing here computes an effect.
"""
