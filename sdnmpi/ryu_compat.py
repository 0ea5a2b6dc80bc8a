"""Makes the stock `ryu-manager` of Ryu 4.34 work on Python 3.11 and accept sdnmpi's own flags.

The venv that scripts/install-deps.sh builds imports this module from a .pth file, so it runs at
the start of every interpreter there. It does no work up front: it installs an import hook that acts
only when two modules are first imported.

- ``eventlet.wsgi``: Ryu 4.34's ``ryu.app.wsgi`` imports ``eventlet.wsgi.ALREADY_HANDLED``, which
  eventlet >= 0.30.3 removed (older eventlet crashes on Python >= 3.10). Ryu only compares
  responses against that sentinel, so any unique object serves.
- ``ryu.cmd.manager``: ``ryu-manager`` parses the command line before it loads any application, so
  command-line flags such as ``--sdnmpi-default-routing`` must be registered before that. We
  register them as soon as the manager module is imported, i.e. before its ``main()`` runs.
"""
import importlib.abc
import importlib.machinery
import sys


def _fix_eventlet_wsgi(module):
    if not hasattr(module, "ALREADY_HANDLED"):
        module.ALREADY_HANDLED = object()


def _register_sdnmpi_flags(_module):
    from sdnmpi.controller import options  # pylint: disable=import-outside-toplevel
    options.register_cli()


_AFTER_IMPORT = {
    "eventlet.wsgi": _fix_eventlet_wsgi,
    "ryu.cmd.manager": _register_sdnmpi_flags,
}


class _AfterImportHook(importlib.abc.MetaPathFinder):
    """Finds the listed modules with the normal path finder and runs a fix after each loads."""

    def find_spec(self, fullname, path=None, target=None):
        fix = _AFTER_IMPORT.get(fullname)
        if fix is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            fix(module)

        spec.loader.exec_module = exec_module
        return spec


def install():
    if not any(isinstance(f, _AfterImportHook) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImportHook())
    for name, fix in _AFTER_IMPORT.items():  # already imported before the hook was installed
        if name in sys.modules:
            fix(sys.modules[name])


install()
