from setuptools import setup

# Folder -> package: the folders at the top of the tree are the packages sdnmpi.<name>.
PACKAGES = {
    "sdnmpi": "sdnmpi",
    "sdnmpi.controller": "controller",
    "sdnmpi.primitives": "primitives",
    "sdnmpi.mininet_topos": "mininet_topos",
    "sdnmpi.traces": "traces",
    "sdnmpi.simulator": "simulator",
    "sdnmpi.profiler": "profiler",
    "sdnmpi.flows": "flows",
    "sdnmpi.ctl": "ctl",
}

CONSOLE_SCRIPTS = [
    "sdnmpi-sim = sdnmpi.simulator.cli:main",
    "sdnmpi-prof = sdnmpi.profiler.cli:main",
    "sdnmpi-ctl = sdnmpi.ctl.cli:main",
]

setup(
    name="sdnmpi",
    version="0.1.0",
    description="SDN-enhanced MPI: a Ryu controller that reshapes a fat-tree for MPI collectives",
    python_requires=">=3.9",
    packages=list(PACKAGES),
    package_dir=PACKAGES,
    package_data={"sdnmpi.flows": ["model.json", "model-mininet.json"],
                  "sdnmpi.controller": ["web/*.html", "web/*.js", "web/*.css"]},
    entry_points={"console_scripts": CONSOLE_SCRIPTS},
    install_requires=["ryu==4.34", "eventlet==0.33.3", "dnspython>=2,<3", "networkx>=3,<4", "msgpack>=1,<2",
                      "prometheus-client>=0.17,<1"],
)
