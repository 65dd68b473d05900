import pytest

from tests.unit.emu.guest import ARCHES


@pytest.fixture(params=ARCHES)
def arch(request) -> str:
    return request.param
