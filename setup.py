from setuptools import setup

setup(
    name="sdnmpi",
    version="0.1.0",
    description="SDN-enhanced MPI: a Ryu controller that reshapes a fat-tree for MPI collectives",
    python_requires=">=3.9",
    packages=[
        "sdnmpi",
        "sdnmpi.controller",
        "sdnmpi.primitives",
        "sdnmpi.mininet_topos",
        "sdnmpi.traces",
        "sdnmpi.profiler",
    ],
    package_dir={
        "sdnmpi": "sdnmpi",
        "sdnmpi.controller": "controller",
        "sdnmpi.primitives": "primitives",
        "sdnmpi.mininet_topos": "mininet_topos",
        "sdnmpi.traces": "traces",
        "sdnmpi.profiler": "profiler",
    },
    entry_points={"console_scripts": ["sdnmpi-prof=sdnmpi.profiler.cli:main"]},
    install_requires=["ryu==4.34", "eventlet==0.33.3", "dnspython>=2,<3", "networkx>=3,<4", "msgpack>=1,<2"],
)
