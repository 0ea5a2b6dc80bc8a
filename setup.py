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
        "sdnmpi.ctl",
    ],
    package_dir={
        "sdnmpi": "sdnmpi",
        "sdnmpi.controller": "controller",
        "sdnmpi.primitives": "primitives",
        "sdnmpi.mininet_topos": "mininet_topos",
        "sdnmpi.ctl": "ctl",
    },
    package_data={"sdnmpi.controller": ["web/*.html", "web/*.js", "web/*.css"]},
    entry_points={"console_scripts": ["sdnmpi-ctl = sdnmpi.ctl.cli:main"]},
    install_requires=["ryu==4.34", "eventlet==0.33.3", "dnspython>=2,<3", "networkx>=3,<4", "msgpack>=1,<2",
                      "prometheus-client>=0.17,<1"],
)
