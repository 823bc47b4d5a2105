"""The recount case (contract section 8): certified results, the petition, scope, costs, report.

Pure modules (values in, values out): :mod:`figures` (standings, margins, percentages with
their arithmetic), :mod:`certified` (parsing the certified canvass), :mod:`petition`,
:mod:`costs`, :mod:`scope`, :mod:`report`. The store side is :mod:`service`; the files of the
report are written by :mod:`render` (HTML, PDF) and :mod:`results_err` (NIST SP 1500-100).
The numbers of each jurisdiction are in :mod:`scanpipe.rules.recount`.
"""
