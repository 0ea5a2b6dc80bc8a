"""GET /sdnmpi/flowdetect: flow detection's state (docs/flows.md): the classifier, the counting
entries, counters (polls, elephants, routed, left to hints, incomplete polls, route failures),
detected pairs per job and the recent detections with their delays in polls. With
--sdnmpi-flow-detection none: {"classifier": "none"}."""
from ryu.app.wsgi import ControllerBase, route

from .rest import _json

DETECTION_KEY = "sdnmpi_flow_detection"


class FlowDetectApi(ControllerBase):
    def __init__(self, req, link, data, **config):
        super().__init__(req, link, data, **config)
        self.detection = data[DETECTION_KEY]

    @route("sdnmpi-flowdetect", "/sdnmpi/flowdetect", methods=["GET"])
    def state(self, _req, **_kwargs):
        return _json(self.detection.to_json() if self.detection is not None else {"classifier": "none"})


def register(wsgi, detection):
    wsgi.register(FlowDetectApi, {DETECTION_KEY: detection})
