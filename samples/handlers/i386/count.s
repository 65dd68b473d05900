# Counts its calls in the first 64-bit word of its scratch area ([esp+8], page_layout.py).
    mov eax, dword ptr [esp + 8]
    add dword ptr [eax], 1
    adc dword ptr [eax + 4], 0
    ret
