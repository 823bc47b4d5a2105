"""Imported only into multiprocessing's fork server (``set_forkserver_preload``): the fork
server is killed when the ``ingest`` process that started it ends (see
:mod:`scanpipe.lifeline`)."""

from scanpipe.lifeline import die_with_parent

die_with_parent()
