"""
Tests of heat/core/devices.py. The GPU code path is exercised without a GPU by loading a private
copy of the module while torch.cuda reports devices.
"""

import importlib.util

import pytest
import torch

from heat.core import devices


@pytest.fixture
def restore_default_device():
    default = devices.get_device()
    yield
    devices.use_device(default)


def load_devices_copy(monkeypatch, available, count=0, env=None):
    """Execute devices.py as a separate module while torch.cuda pretends to have ``count`` GPUs."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: available)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    for variable in devices._LOCAL_RANK_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    for variable, value in (env or {}).items():
        monkeypatch.setenv(variable, value)
    spec = importlib.util.spec_from_file_location("_heat_devices_copy", devices.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cpu():
    cpu = devices.cpu
    assert isinstance(cpu, devices.Device)
    assert cpu.device_type == "cpu"
    assert cpu.device_id == 0
    assert cpu.torch_device == "cpu"
    assert isinstance(cpu.torch_device, str)
    assert str(cpu) == "cpu:0"
    assert repr(cpu) == "Device(device_type='cpu', device_id=0, torch_device='cpu')"
    assert torch.zeros(1, device=cpu.torch_device).device.type == "cpu"


def test_device_equality():
    cpu = devices.cpu
    assert cpu == devices.Device("cpu", 0, "cpu")
    assert cpu == "cpu" and "cpu" == cpu
    assert cpu == "CPU" and cpu == "cpu:0"
    assert cpu == torch.device("cpu")
    assert cpu != "gpu" and cpu != "cuda"
    assert cpu != devices.Device("gpu", 0, "cuda:0")
    assert cpu != 0 and cpu != None  # noqa: E711
    assert hash(cpu) == hash(devices.Device("cpu", 0, "cpu")) == hash("cpu")
    assert len({cpu, devices.Device("cpu", 0, "cpu")}) == 1
    gpu = devices.Device("gpu", 1, "cuda:1")
    assert gpu == "gpu" and gpu == "cuda" and gpu == "cuda:1" and gpu == "gpu:1"
    assert gpu != "cuda:0" and gpu != devices.Device("gpu", 0, "cuda:0")
    assert gpu == torch.device("cuda", 1) and gpu == torch.device("cuda")
    assert gpu != torch.device("cuda", 0) and gpu != torch.device("cpu")


def test_device_constructor_types():
    with pytest.raises(TypeError, match="device_type"):
        devices.Device(0, 0, "cpu")
    with pytest.raises(TypeError, match="device_id"):
        devices.Device("cpu", "0", "cpu")
    with pytest.raises(TypeError, match="device_id"):
        devices.Device("cpu", True, "cpu")
    with pytest.raises(TypeError, match="torch_device"):
        devices.Device("cpu", 0, torch.device("cpu"))


def test_device_attributes_are_read_only():
    with pytest.raises(AttributeError):
        devices.cpu.device_type = "gpu"


def test_all():
    for name in devices.__all__:
        assert hasattr(devices, name)
    assert set(devices.__all__) >= {"Device", "cpu", "get_device", "use_device", "sanitize_device"}
    assert ("gpu" in devices.__all__) == torch.cuda.is_available()
    assert hasattr(devices, "gpu") == torch.cuda.is_available()


def test_sanitize_device():
    cpu = devices.cpu
    assert devices.sanitize_device(None) is devices.get_device()
    assert devices.sanitize_device() is devices.get_device()
    for spec in ("cpu", "CPU", " cpu ", "cpu:0", cpu, torch.device("cpu")):
        assert devices.sanitize_device(spec) is cpu
    other = devices.Device("cpu", 0, "cpu")
    assert devices.sanitize_device(other) is other


def test_sanitize_device_errors():
    for bad in ("tpu", "", "cpu:1"):
        with pytest.raises(ValueError, match="device"):
            devices.sanitize_device(bad)
    for bad in (0, 1.5, ["cpu"], object()):
        with pytest.raises(TypeError, match="device"):
            devices.sanitize_device(bad)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the behaviour without a GPU")
def test_sanitize_device_without_gpu():
    for spec in ("gpu", "cuda", "cuda:0", torch.device("cuda")):
        with pytest.raises(ValueError, match="device"):
            devices.sanitize_device(spec)
    with pytest.raises(ValueError, match="device"):
        devices.use_device("gpu")


def test_use_device(restore_default_device):
    devices.use_device("cpu")
    assert devices.get_device() is devices.cpu
    custom = devices.Device("cpu", 0, "cpu")
    devices.use_device(custom)
    assert devices.get_device() is custom
    assert devices.sanitize_device(None) is custom
    devices.use_device()
    assert devices.get_device() is devices.cpu
    with pytest.raises(TypeError):
        devices.use_device(3)
    assert devices.get_device() is devices.cpu


def test_module_without_cuda(monkeypatch):
    module = load_devices_copy(monkeypatch, available=False)
    assert not hasattr(module, "gpu")
    assert "gpu" not in module.__all__
    assert module.get_device() is module.cpu


@pytest.mark.parametrize(
    "env, count, expected_id",
    [
        ({}, 4, 0),
        ({"OMPI_COMM_WORLD_LOCAL_RANK": "5"}, 4, 1),
        ({"MPI_LOCALRANKID": "2"}, 4, 2),
        ({"PMI_LOCAL_RANK": "3"}, 2, 1),
        ({"SLURM_LOCALID": "1"}, 2, 1),
        # the MPI launcher's variable wins over Slurm's
        ({"MPI_LOCALRANKID": "3", "SLURM_LOCALID": "0"}, 8, 3),
        ({"OMPI_COMM_WORLD_LOCAL_RANK": "not a number"}, 2, 0),
    ],
)
def test_module_with_cuda(monkeypatch, env, count, expected_id):
    module = load_devices_copy(monkeypatch, available=True, count=count, env=env)
    gpu = module.gpu
    assert "gpu" in module.__all__
    assert gpu.device_type == "gpu"
    assert gpu.device_id == expected_id
    assert gpu.torch_device == f"cuda:{expected_id}"
    assert str(gpu) == f"gpu:{expected_id}"
    assert module.get_device() is module.cpu  # cpu stays the default
    for spec in ("gpu", "GPU", "cuda", f"cuda:{expected_id}", f"gpu:{expected_id}", gpu):
        assert module.sanitize_device(spec) is gpu
    assert module.sanitize_device(torch.device("cuda", expected_id)) is gpu
    with pytest.raises(ValueError, match="device"):
        module.sanitize_device(f"cuda:{expected_id + 1}")
    module.use_device("gpu")
    assert module.get_device() is gpu
    module.use_device(None)
    assert module.get_device() is module.cpu


def test_operands_on_two_devices_raise_naming_them():
    """A CPU and a GPU operand give the same ValueError naming both devices on every rank (not a
    torch RuntimeError from deep inside, nor a silent copy). Without a GPU, a second Device object
    whose tensors stay on the CPU stands in for it: heat's checks compare Devices, not tensors."""
    import heat as ht
    from tests.helpers import assert_raises_then_collective_works

    other = devices.Device("gpu", 0, "cpu")
    for split in (None, 0):
        a = ht.ones((4, 3), split=split)
        b = ht.ones((4, 3), split=split)
        b._device = other
        calls = {
            "add": lambda: a + b,
            "reflected add": lambda: b + a,
            "multiply": lambda: ht.multiply(a, b),
            "maximum": lambda: ht.maximum(a, b),
            "matmul": lambda: ht.matmul(a, b.T),
            "concatenate": lambda: ht.concatenate([a, b]),
            "where": lambda: ht.where(a > 0, a, b),
        }
        for name, call in calls.items():
            with pytest.raises(ValueError, match="device") as raised:
                call()
            assert "cpu:0" in str(raised.value) and "gpu:0" in str(raised.value), name
        assert_raises_then_collective_works(ValueError, lambda: a - b)
